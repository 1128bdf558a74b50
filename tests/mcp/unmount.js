/* unmount: undoes what a killed gateway left mounted beneath a test's
 * folder (each sandboxed kernel's session folder is a mount of its own,
 * and a gateway killed before it stops never unmounts it). No packages:
 * the MCP tests (helpers.js) and the JupyterLab test import it. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

export function unmountBelow(dir) {
  let points;
  try {
    points = readFileSync('/proc/self/mountinfo', 'utf8').split('\n')
      .map((line) => line.split(' ')[4]).filter(Boolean)
      .map((p) => p.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))));
  } catch {
    return;
  }
  const prefix = dir.replace(/\/+$/, '') + '/';
  for (const p of points.filter((m) => m.startsWith(prefix)).sort((a, b) => b.length - a.length)) {
    try {
      execFileSync('umount', ['-l', p], { stdio: 'ignore' });
    } catch {
      /* not ours to undo (not root): nothing was mounted by the server either */
    }
  }
}
