/**
 * Runs Prism as its child and stops it when the mock goes away: stdin is a pipe from the mock that closes when it
 * exits for any reason (SIGKILL included); SIGTERM / SIGINT / SIGHUP stop Prism too.
 * Usage: node prism-guard.mjs <prism-cli entry> mock <document> [options…]
 */
import { spawn } from 'node:child_process';

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node prism-guard.mjs <prism-cli entry> [prism arguments…]');
  process.exit(2);
}
const prism = spawn(process.execPath, [entry, ...args], { stdio: ['ignore', 'inherit', 'inherit'] });

let stopping = false;
function stop() {
  if (stopping) return;
  stopping = true;
  prism.kill('SIGTERM');
  setTimeout(() => prism.kill('SIGKILL'), 3000).unref();
}
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, stop);
prism.on('error', (err) => {
  console.error(`prism-guard: cannot start Prism: ${err.message}`);
  process.exit(1);
});
prism.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
