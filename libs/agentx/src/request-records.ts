/** Reading a point's raw requests file (`requests.jsonl`, one {@link RequestRecord} per line, written by ./point.ts and ./aiperf/run.ts). */
import { readFileSync } from 'node:fs';
import { requestRecordSchema, type RequestRecord } from './result';

/** Every request record of a requests file, each line validated by its schema (blank lines skipped). */
export function readRequestRecords(file: string): RequestRecord[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => requestRecordSchema.parse(JSON.parse(l)));
}
