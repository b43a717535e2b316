// Imports each entry point named on the command line (`@onceflow/core/kit`, …) with plain node, as an
// application would: a dependency a package uses but does not declare fails here, naming it.
const failed = [];
for (const specifier of process.argv.slice(2)) {
  try {
    const names = Object.keys(await import(specifier));
    if (names.length === 0) failed.push(`${specifier}: exports nothing`);
  } catch (err) {
    failed.push(`${specifier}: ${err instanceof Error ? err.message : err}`);
  }
}
if (failed.length) {
  console.error(
    `These entry points do not load from the installed tarballs:\n  ${failed.join('\n  ')}`,
  );
  process.exit(1);
}
console.log(`${process.argv.length - 2} entry points load with plain node`);
