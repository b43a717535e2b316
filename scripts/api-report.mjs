#!/usr/bin/env node
// API reports: one `packages/<pkg>/api/<entry>.api.md` per `exports` key of every public package
// (`index` for `.`), made by api-extractor from the built `dist/*.d.ts` with api-extractor.base.json.
//   node scripts/api-report.mjs           fails listing each report that differs from the committed one
//   node scripts/api-report.mjs --update  rewrites the reports (`pnpm api:update`)
// Needs `pnpm build` first. Every entry shares one TypeScript program, so the run takes seconds.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { CompilerState, Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { publicPackages, root } from './public-packages.mjs';

const update = process.argv.includes('--update');
const baseFile = join(root, 'api-extractor.base.json');
const base = ExtractorConfig.loadFile(baseFile);
const temp = mkdtempSync(join(tmpdir(), 'onceflow-api-'));

const configs = publicPackages().flatMap((pkg) =>
  pkg.entries.map((entry) => {
    if (!existsSync(entry.types))
      throw new Error(`${relative(root, entry.types)} is missing: run \`pnpm build\` first`);
    return ExtractorConfig.prepare({
      configObject: {
        ...base,
        projectFolder: pkg.dir,
        mainEntryPointFilePath: entry.types,
        apiReport: {
          ...base.apiReport,
          reportFileName: entry.name,
          reportTempFolder: join(temp, basename(pkg.dir)),
        },
      },
      configObjectFullPath: baseFile,
      packageJsonFullPath: join(pkg.dir, 'package.json'),
    });
  }),
);

const changed = [];
let errors = 0;
try {
  const compilerState = CompilerState.create(configs[0], {
    additionalEntryPoints: configs.map((c) => c.mainEntryPointFilePath),
  });
  for (const config of configs) {
    const report = relative(root, join(config.reportFolder, config.reportConfigs[0].fileName));
    if (update) mkdirSync(config.reportFolder, { recursive: true });
    const result = Extractor.invoke(config, {
      localBuild: update,
      compilerState,
      printApiReportDiff: !update,
      messageCallback: (message) => {
        // Only what needs a reader: progress lines and "report changed" (summarised below) are quiet.
        if (message.logLevel === 'info' || message.logLevel === 'verbose') message.handled = true;
        if (message.messageId === 'console-api-report-not-copied') message.handled = true;
      },
    });
    errors += result.errorCount;
    if (result.apiReportChanged) changed.push(report);
  }
} finally {
  rmSync(temp, { recursive: true, force: true });
}

if (update) {
  console.log(
    changed.length
      ? `API reports rewritten:\n  ${changed.join('\n  ')}`
      : `${configs.length} API reports, none changed`,
  );
  process.exit(errors ? 1 : 0);
}
if (changed.length)
  console.error(
    `\nThese API reports differ from the committed ones (review the change, then \`pnpm api:update\`):\n  ${changed.join('\n  ')}`,
  );
if (errors) console.error(`\napi-extractor reported ${errors} error(s) above`);
if (changed.length || errors) process.exit(1);
console.log(`${configs.length} API reports match the committed ones`);
