import { passes, selectFields } from '../model/record-fields.js';
import { goneRecord, wikiFacts } from '../model/wiki-facts.js';
import { timeuuidMicros } from '../../../util/timeuuid.js';
import { tidTime } from '../../../util/tid.js';
import type { ChangeEvent } from '../tables/change-log.js';
import { RECORD_KINDS, type EventReading, type EventWriter } from './event-reading.js';

/** What a Realtime client asked for: its fields and filters, checked, and where in the one partition it starts. */
export interface RealtimeOptions {
  fields: string[][];
  filters: { path: string[]; value: unknown }[];
  /** Events at this offset or later only (Enterprise's `offsets` for the partition). */
  fromOffset?: number;
}

/**
 * The wiki's changes as Wikimedia Enterprise's Realtime streams them: one JSON record a line
 * (NDJSON), each with its `event` (`identifier`, `type`: update, delete or visibility-change, its
 * dates, its partition and offset). An update carries the page's record as On-demand answers it
 * now; a deletion or a visibility change carries the page's name, namespace and wiki (and the
 * revision's `visibility` now), never text.
 * A wiki is one partition, 0, and an event's offset is its time in microseconds: a client
 * resuming with `offsets` gets the events at that offset and after (as Enterprise does, one
 * already had may come again).
 */
export function realtimeWriter(reading: EventReading, options: RealtimeOptions): EventWriter {
  return {
    async write(event) {
      const offset = timeuuidMicros(event.id);
      if (options.fromOffset !== undefined && offset < options.fromOffset) return undefined;
      const type = event.kind === 'delete' ? 'delete' : event.kind === 'visibility' ? 'visibility-change' : RECORD_KINDS.has(event.kind) ? 'update' : undefined;
      if (!type) return undefined;
      const domain = reading.domainOf(event);
      const at = new Date(tidTime(event.id)).toISOString();
      const meta = { identifier: event.id, type, date_created: at, date_published: at, partition: 0, offset };
      let line: Record<string, unknown>;
      if (type === 'update') {
        const record = await reading.record(domain, event.to ?? event.title, event.id);
        // Deleted or hidden since: a later event says so.
        if (!record) return undefined;
        line = { ...record, event: meta };
      } else {
        line = await bare(reading, domain, event, meta);
      }
      if (!passes(line, options.filters)) return undefined;
      return `${JSON.stringify(options.fields.length ? selectFields(line, options.fields) : line)}\n`;
    },
  };
}

/** A record without text: what a deletion or a visibility change says of its page. */
async function bare(reading: EventReading, domain: string, event: ChangeEvent, meta: Record<string, unknown>): Promise<Record<string, unknown>> {
  const facts = wikiFacts(await reading.siteInfo(domain));
  const gone = goneRecord(event.title.replace(/_/g, ' '), await reading.namespaceOf(domain, event.title), facts, meta, event.rev);
  // A visibility change says what of its revision may be shown now.
  const visibility = event.kind === 'visibility' && event.rev !== undefined ? await reading.visibility(domain, event.title, event.rev) : undefined;
  return visibility ? { ...gone, visibility } : gone;
}
