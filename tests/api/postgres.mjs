// A throwaway PostgreSQL server for the Node.js tests of a cluster, as the
// C++ tests make theirs (src/mm/testing/postgres_server.hpp): initdb in a
// fresh temp directory, pg_ctl on a free loopback port, one trusted user;
// stopped and deleted by stop(). Run as root (as CI is), it runs as Debian's
// `postgres` user, which PostgreSQL requires.
import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Debian puts each major version in /usr/lib/postgresql/N/bin: the newest.
function binaries() {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(a) - Number(b));
  return versions.length ? join(root, versions.at(-1), 'bin') : null;
}

export function havePostgres() {
  return binaries() !== null;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export async function startPostgres() {
  const bin = binaries();
  if (!bin) throw new Error("PostgreSQL's server is not installed");
  const dir = mkdtempSync(join(tmpdir(), 'mm-node-pg-'));
  const asUser = process.getuid?.() === 0 ? ['runuser', '-u', 'postgres', '--'] : [];
  if (asUser.length) {
    const id = (name) => Number(execFileSync('id', [name, 'postgres']).toString().trim());
    chownSync(dir, id('-u'), id('-g'));
  }
  const run = (args) => {
    const [cmd, ...rest] = [...asUser, ...args];
    try {
      return execFileSync(cmd, rest, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
    } catch (e) {
      throw new Error(`PostgreSQL's ${args[0]} failed: ${e.stdout}${e.stderr}`);
    }
  };
  const data = join(dir, 'data');
  run([join(bin, 'initdb'), '-D', data, '-U', 'mm', '-A', 'trust', '--no-sync', '--encoding=UTF8', '--locale=C']);
  let port;
  for (let attempt = 0; ; ++attempt) {  // a free port may be taken before the start
    port = await freePort();
    try {
      run([join(bin, 'pg_ctl'), '-D', data, '-l', join(dir, 'server.log'), '-w', '-t', '60', '-o',
           `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, 'start']);
      break;
    } catch (e) {
      if (attempt === 2) throw e;
    }
  }
  return {
    url: `postgresql://mm@127.0.0.1:${port}/postgres`,
    stop() {
      try {
        run([join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', '-w', 'stop']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
