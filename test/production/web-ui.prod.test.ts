/**
 * The production-shaped stack's Web UI holds the CLI's client certificate and has no login of its
 * own, so only the stack's user may reach it (scripts/stack-production.sh ui_start): it listens on
 * no TCP port of the host, only on a unix socket in a 0700 folder. Another local user can neither
 * connect to a port nor to the socket; the owner reads sweeps through it.
 */
import { spawnSync } from 'node:child_process';
import { statSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prodEnv, uiGet } from './harness';

const tcpConnect = (port: number): Promise<string> =>
  new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve('connected');
    });
    s.on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
  });

describe('the production Web UI is reachable by its user only', () => {
  it('no TCP port of the host answers for it', async () => {
    const port = Number(new URL(prodEnv().TEMPORAL_UI_URL!).port);
    expect(await tcpConnect(port)).toBe('ECONNREFUSED');
  });

  it('its socket is in a folder only the owner can enter; another user is refused', () => {
    const socket = prodEnv().TEMPORAL_UI_SOCKET!;
    expect(statSync(socket).isSocket()).toBe(true);
    expect(statSync(dirname(socket)).mode & 0o777).toBe(0o700);
    expect(statSync(dirname(socket)).uid).toBe(process.getuid!());
    // as `nobody` (the test runs as root on the stack host: runuser; otherwise another uid is not available)
    const asNobody = spawnSync(
      'runuser',
      [
        '-u',
        'nobody',
        '--',
        'curl',
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code}',
        '--unix-socket',
        socket,
        'http://localhost/api/v1/settings',
      ],
      { encoding: 'utf8' },
    );
    expect(asNobody.stdout.trim()).toBe('000'); // no connection at all
    expect(asNobody.status).toBe(7); // curl: failed to connect (EACCES on the socket path)
  });

  it('the owner reads the namespace through the socket (the UI server talks mutual TLS to the frontend)', async () => {
    const r = await uiGet('/api/v1/namespaces/infersweep');
    expect(r.status).toBe(200);
    expect((JSON.parse(r.body) as { namespaceInfo?: { name?: string } }).namespaceInfo?.name).toBe('infersweep');
  });
});
