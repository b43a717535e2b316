// Fetches Java artifacts and their runtime dependencies from Maven Central with `mvn`, into a
// cache directory outside the repository. Nothing is downloaded from anywhere else.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Resolves `artifacts` ({groupId, artifactId, version}) with their runtime dependencies into
 * `<cacheDir>/<name>/lib` and returns that directory. A completed fetch is reused.
 */
export function fetchMaven({ cacheDir, name, artifacts }) {
  const dir = join(cacheDir, name);
  const lib = join(dir, 'lib');
  const done = join(dir, '.complete');
  if (existsSync(done)) return lib;
  mkdirSync(dir, { recursive: true });
  const deps = artifacts
    .map(
      (a) =>
        `<dependency><groupId>${a.groupId}</groupId><artifactId>${a.artifactId}</artifactId><version>${a.version}</version></dependency>`,
    )
    .join('\n    ');
  writeFileSync(
    join(dir, 'pom.xml'),
    `<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>dev.onceflow.brokers</groupId>
  <artifactId>${name}</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
    ${deps}
  </dependencies>
</project>
`,
  );
  console.log(`fetching ${name} from Maven Central into ${lib}`);
  const r = spawnSync(
    'mvn',
    [
      '-q',
      '-B',
      'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy-dependencies',
      `-DoutputDirectory=${lib}`,
      '-DincludeScope=runtime',
    ],
    { cwd: dir, stdio: 'inherit' },
  );
  if (r.status !== 0 || !existsSync(lib) || readdirSync(lib).length === 0)
    throw new Error(`mvn could not fetch ${name} (exit ${r.status}); see the output above`);
  writeFileSync(done, new Date().toISOString());
  return lib;
}
