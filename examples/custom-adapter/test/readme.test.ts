import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';

// packages/conformance/README.md shows this example's files in blocks whose first line is a
// comment naming the file; each block must be that file exactly, so the README cannot drift.
const root = new URL('../../../', import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), 'utf8');
const blocks = [
  ...read('packages/conformance/README.md').matchAll(
    /^```ts\n\/\/ (examples\/\S+)\n(.*?\n)```$/gms,
  ),
].map(([, path, code]) => ({ path, code }));
const files = ['src/transport.ts', 'src/fake-client.ts', 'test/conformance.test.ts'].map(
  (file) => `examples/custom-adapter/${file}`,
);

it('the conformance README shows exactly the example files, each once', () => {
  expect(blocks.map((b) => b.path).sort()).toEqual([...files].sort());
});

for (const path of files) {
  it(`the conformance README shows ${path} as it is`, () => {
    const block = blocks.find((b) => b.path === path);
    expect(block?.code, `the block starting with "// ${path}"`).toBe(read(path));
  });
}
