import { accessSync, constants, statSync } from 'node:fs';
import type { FileProbe, ProbedFile } from '@infersweep/topology';

/** The real filesystem as a FileProbe (libs/topology checkSiteFiles): kind, permission bits, readable by this process. */
export const localFileProbe: FileProbe = {
  stat(path: string): ProbedFile {
    let st;
    try {
      st = statSync(path);
    } catch (e) {
      return { kind: 'missing', error: (e as NodeJS.ErrnoException).code ?? (e as Error).message };
    }
    let readable = true;
    try {
      accessSync(path, constants.R_OK);
    } catch {
      readable = false;
    }
    return { kind: st.isFile() ? 'file' : st.isDirectory() ? 'dir' : 'other', mode: st.mode & 0o7777, readable };
  },
};
