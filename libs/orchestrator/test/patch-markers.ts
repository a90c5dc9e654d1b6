/** The patch ids recorded in a history (JSON as historyToJSON writes it): its `core_patch` markers. */
export function markersIn(history: { events: Record<string, unknown>[] }): string[] {
  const ids: string[] = [];
  for (const e of history.events) {
    const m = e.markerRecordedEventAttributes as
      { markerName?: string; details?: Record<string, { payloads?: { data?: string }[] }> } | undefined;
    if (m?.markerName !== 'core_patch') continue;
    const data = m.details?.['patch-data']?.payloads?.[0]?.data;
    if (!data) continue;
    const decoded = JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as { id?: string } | string;
    ids.push(typeof decoded === 'string' ? decoded : String(decoded.id));
  }
  return ids;
}
