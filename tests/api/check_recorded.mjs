// Holds answers the C++ tests recorded (tests/answer_recorder.hpp: the
// cluster tests', takeovers included) to docs/openapi.json, as the contract
// test holds its own: each status must be one its operation lists, and each
// body must fit its schema. Usage: node check_recorded.mjs FILE
import { existsSync, readFileSync } from 'node:fs';
import { Contract } from './contract.mjs';

const file = process.argv[2];
if (!file || !existsSync(file)) {
  console.error(`${file}: no recorded answers (the tests that record them did not run)`);
  process.exit(1);
}
const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);
if (lines.length === 0) {
  console.error(`${file}: empty (the tests that record answers recorded none)`);
  process.exit(1);
}
const contract = new Contract();
const statuses = new Map();
for (const line of lines) {
  const a = JSON.parse(line);
  contract.check(a.method, a.path, a.status, a.content_type, a.body);
  statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
}
const counts = [...statuses].sort((x, y) => x[0] - y[0]).map(([s, n]) => `${s}: ${n}`);
console.log(`${lines.length} answers checked (${counts.join(', ')})`);
const unique = [...new Set(contract.failures)];
if (unique.length > 0) {
  console.error(`${contract.failures.length} answers break the contract; the different ones:`);
  for (const f of unique.slice(0, 30)) console.error(`  ${f}`);
  process.exit(1);
}
