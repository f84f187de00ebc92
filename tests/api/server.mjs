// The real matchmakerd for the Node.js tests: a config file in a fresh temp
// dir, port 0, started and stopped by the test. The binary comes from
// MATCHMAKERD (the build's, set by CTest).
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

export const tokens = {
  view: 'view-token-0123456789',
  test: 'test-token-0123456789',
  otherTest: 'test-token-abcdefghij',
  admin: 'admin-token-0123456789',
};

// Starts matchmakerd with `patch` (or `patch(dir)`, given the server's
// temporary directory) over a small base config; resolves once it
// listens. `stop()` sends SIGTERM and waits for the exit: a server still
// running 60 s later is killed (SIGKILL) and stop() rejects with its log, so
// a stop that hangs fails the test instead of holding it to ctest's timeout.
export async function startServer(patch = {}) {
  const binary = process.env.MATCHMAKERD;
  if (!binary) throw new Error('MATCHMAKERD must name the matchmakerd binary');
  const dir = mkdtempSync(join(tmpdir(), 'mm-node-test-'));
  const config = {
    database: { path: join(dir, 'mm.db') },
    demo: { players: 3000, queries_per_second: 0 },
    instances: 2,
    http: { port: 0 },
    actor: { port: -1 },
    tokens: [
      { token: tokens.view, role: 'view' },
      { token: tokens.test, role: 'test' },
      { token: tokens.otherTest, role: 'test' },
      { token: tokens.admin, role: 'admin' },
    ],
    matchmaker: { database_scan_first_delay: '0s', database_scan_tick: '500ms', random_seed: 1 },
    ...(typeof patch === 'function' ? patch(dir) : patch),
  };
  writeFileSync(join(dir, 'matchmakerd.json'), JSON.stringify(config, null, 2));
  const child = spawn(binary, ['--config', join(dir, 'matchmakerd.json')], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (d) => {
    if (log.length < 65536) log += d;
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve(code ?? signal)));
  // The RESP port's line, when it is open, comes after the HTTP line.
  const withResp = config.resp !== undefined && config.resp.port >= 0;
  let respPort = 0;
  const port = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('matchmakerd did not listen within 120 s:\n' + log)), 120_000);
    let httpPort = 0;
    createInterface({ input: child.stdout }).on('line', (line) => {
      const m = /http listening on http:\/\/127\.0\.0\.1:(\d+)\//.exec(line);
      if (m) httpPort = Number(m[1]);
      const r = /resp listening on 127\.0\.0\.1:(\d+)/.exec(line);
      if (r) respPort = Number(r[1]);
      if (httpPort && (!withResp || respPort)) {
        clearTimeout(timer);
        resolve(httpPort);
      }
    });
    exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`matchmakerd exited (${code}) before it listened:\n${log}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    respPort,
    dir,
    log: () => log,
    async stop(limitMs = 60_000) {
      child.kill('SIGTERM');
      let timer;
      const late = new Promise((resolve) => {
        timer = setTimeout(() => resolve('late'), limitMs);
      });
      const code = await Promise.race([exited, late]);
      clearTimeout(timer);
      if (code === 'late') child.kill('SIGKILL');
      const killed = code === 'late' ? await exited : code;
      rmSync(dir, { recursive: true, force: true });
      if (code === 'late')
        throw new Error(`matchmakerd did not exit within ${limitMs} ms of SIGTERM (killed: ${killed}):\n${log.slice(-8000)}`);
      return code;
    },
  };
}

// Polls `probe` (an async function) until it returns a truthy value; each
// poll asks the server, so this waits on the server's state, not on time.
export async function until(probe, what, limitMs = 30_000) {
  const deadline = Date.now() + limitMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
