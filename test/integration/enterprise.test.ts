import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { SnapshotWriter } from '../../src/modules/page/snapshot/snapshot-writer.js';
import { BatchMaker } from '../../src/modules/page/enterprise/batch-maker.js';
import { SnapshotShelf } from '../../src/modules/page/enterprise/snapshot-shelf.js';
import type { RequestContext } from '../../src/router/types.js';
import { request, sleep, tempDir } from '../helpers.js';
import { listen, listenLines } from '../sse.js';
import { tarEntries } from '../tar-entries.js';
import { FAST_FOLLOWER, startAgainstWiki, waitFor, WIKI_URL, type AgainstWiki } from '../wiki.js';

const RUN = Date.now().toString(36);
const PREFIX = `Enterprise_${RUN}_`;

/** The wiki's own lists of a page (one request, followed to its end): what a record must equal. */
async function wikiLists(title: string): Promise<{ categories: string[]; templates: string[]; redirects: string[]; protection: { type: string; level: string; expiry: string }[] }> {
  const lists = { categories: [] as string[], templates: [] as string[], redirects: [] as string[], protection: [] as { type: string; level: string; expiry: string }[] };
  let cont: Record<string, string> = { continue: '' };
  for (;;) {
    const qs = new URLSearchParams({ action: 'query', format: 'json', formatversion: '2', titles: title, prop: 'categories|templates|redirects|info', cllimit: 'max', tllimit: 'max', rdlimit: 'max', inprop: 'protection', ...cont });
    const json = (await (await fetch(`${WIKI_URL}/api.php?${qs}`)).json()) as { query: { pages: Record<string, any>[] }; continue?: Record<string, string> };
    const page = json.query.pages[0]!;
    lists.categories.push(...(page.categories ?? []).map((c: { title: string }) => c.title));
    lists.templates.push(...(page.templates ?? []).map((t: { title: string }) => t.title));
    lists.redirects.push(...(page.redirects ?? []).map((r: { title: string }) => r.title));
    if (page.protection) lists.protection = page.protection;
    if (!json.continue) return lists;
    cont = json.continue;
  }
}

/** Enterprise's On-demand, Structured Contents, Snapshots and the realtime records, against the real wiki. */
describe('Wikimedia Enterprise APIs for the wiki', () => {
  let a: AgainstWiki;
  let base: string;
  let ctx: RequestContext;
  const shelf = tempDir('wikistore-enterprise-');
  const title = (name: string) => `${PREFIX}${name}`;
  const article = (name: string, init: { method?: string; body?: unknown; query?: string; headers?: Record<string, string> } = {}) =>
    request(`${base}/articles/${encodeURIComponent(name)}${init.query ?? ''}`, { method: init.method ?? 'GET', headers: { ...(init.body ? { 'content-type': 'application/json' } : {}), ...init.headers }, body: init.body });

  before(async () => {
    a = await startAgainstWiki({ ...FAST_FOLLOWER, snapshots: { dir: shelf, every: null, keep: 2, namespaces: [0], batches: null } });
    base = `${a.s.base}/wiki.test/enterprise/v2`;
    ctx = a.s.app.router.context({ requestId: 'enterprise-test', admin: true, log: a.s.app.log });
    await a.wiki.edit(`Template:${PREFIX}Box`, `<includeonly>[[Category:${PREFIX}From template]]</includeonly><noinclude>Adds a category.</noinclude>`);
    await a.wiki.edit(title('Main'), [
      `{{${PREFIX}Box}}`,
      `'''Main''' is the [[Lead]] paragraph.<ref>A source, [[Cited]].</ref>`,
      '',
      'A second lead paragraph.',
      '',
      '== First ==',
      'First section text with a [[Link]].',
      '* one',
      '* two',
      '=== Nested ===',
      'Nested text.',
      '== Second ==',
      'Second text.',
      '== References ==',
      '<references/>',
      `[[Category:${PREFIX}Visible]]`,
    ].join('\n'));
    await a.wiki.edit(title('Main'), (await a.wiki.wikitext(await a.wiki.latestRevid(title('Main'))) + '\nMore.'), 'second revision');
  });
  after(async () => {
    await a?.close();
  });

  it("answers a page's record in Enterprise's shape, its lists equal to the wiki's, its editor and lengths filled", async () => {
    // The service learns of the second edit by following the wiki: the record of the latest revision once it has.
    const latest = await a.wiki.latestRevid(title('Main'));
    const res = await waitFor('the record of the latest revision', 20_000, async () => {
      const answer = await article(title('Main'));
      return answer.json?.[0]?.version?.identifier === latest ? answer : undefined;
    });
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers['content-type']), /application\/json/);
    assert.ok(Array.isArray(res.json) && res.json.length === 1);
    const record = res.json[0];
    const wiki = await wikiLists(title('Main'));
    assert.deepEqual(record.categories.map((c: { name: string }) => c.name).sort(), wiki.categories.sort());
    assert.ok(record.categories.some((c: { name: string }) => c.name.endsWith('From template')), 'a category a template adds is listed');
    assert.deepEqual(record.templates.map((t: { name: string }) => t.name).sort(), wiki.templates.sort());
    assert.ok(record.templates[0].url.startsWith(WIKI_URL), record.templates[0].url);
    assert.deepEqual(record.protection, []);
    assert.equal(record.abstract, 'Main is the Lead paragraph.\nA second lead paragraph.');
    const wikitext = await a.wiki.wikitext(record.version.identifier);
    assert.equal(record.version.number_of_characters, [...wikitext].length);
    const history = await a.wiki.history(title('Main'));
    assert.equal(record.previous_version.identifier, history[1]!.revid);
    assert.equal(record.previous_version.number_of_characters, [...(await a.wiki.wikitext(history[1]!.revid))].length);
    assert.ok(record.date_created && Date.parse(record.date_created) <= Date.parse(record.date_modified));
    assert.ok(record.date_previously_modified && Date.parse(record.date_previously_modified) <= Date.parse(record.date_modified));
    const editor = record.version.editor;
    assert.equal(editor.name, 'Botuser');
    assert.ok(editor.edit_count > 0 && Array.isArray(editor.groups) && editor.groups.includes('user'), JSON.stringify(editor));
    for (const flag of ['is_bot', 'is_admin', 'is_patroller', 'has_advanced_rights']) assert.equal(typeof editor[flag], 'boolean', flag);
    assert.ok(editor.date_started);
    assert.equal(record.article_body.wikitext, wikitext);
    assert.match(record.article_body.html, /Nested text\./);
  });

  it('selects fields (dotted, with wildcards) and filters by GET and POST; refuses what Enterprise refuses in its error shape', async () => {
    const picked = await article(title('Main'), { method: 'POST', body: { fields: ['name', 'version.editor.*', 'categories.name'], filters: [{ field: 'in_language.identifier', value: 'en' }], limit: 1 } });
    assert.equal(picked.status, 200, picked.text);
    assert.deepEqual(Object.keys(picked.json[0]).sort(), ['categories', 'name', 'version']);
    assert.deepEqual(Object.keys(picked.json[0].version), ['editor']);
    assert.deepEqual(Object.keys(picked.json[0].categories[0]), ['name']);
    const byQuery = await article(title('Main'), { query: '?fields=name,url&filters=namespace.identifier:0' });
    assert.deepEqual(Object.keys(byQuery.json[0]).sort(), ['name', 'url']);
    // A GET with its options as a JSON body (as Enterprise's own clients may send them) is answered by them, not ignored.
    const getWithBody = await article(title('Main'), { body: { fields: ['name', 'identifier'] } });
    assert.equal(getWithBody.status, 200, getWithBody.text);
    assert.deepEqual(Object.keys(getWithBody.json[0]).sort(), ['identifier', 'name']);
    const ndjson = await article(title('Main'), { query: '?fields=name', headers: { accept: 'application/x-ndjson' } });
    assert.equal(ndjson.text, `${JSON.stringify({ name: title('Main').replace(/_/g, ' ') })}\n`);
    const filteredOut = await article(title('Main'), { method: 'POST', body: { filters: [{ field: 'is_part_of.identifier', value: 'nowiki' }] } });
    assert.equal(filteredOut.status, 404);
    for (const [body, status] of [[{ fields: ['no_such_field'] }, 400], [{ filters: [{ field: 'version.nope', value: 1 }] }, 400], [{ limit: 11 }, 422], [{ fields: 'name' }, 400], [{ other: 1 }, 400]] as const) {
      const res = await article(title('Main'), { method: 'POST', body });
      assert.equal(res.status, status, `${JSON.stringify(body)}: ${res.text}`);
      assert.deepEqual(Object.keys(res.json).sort(), ['message', 'status']);
      assert.equal(res.json.status, status);
    }
    // Filters as JSON in the query: answered by them, and bounded as a JSON body is (a nest too deep for the comparisons is a 400, not a 500).
    const jsonQuery = await article(title('Main'), { query: `?fields=name&filters=${encodeURIComponent(JSON.stringify([{ field: 'namespace.identifier', value: 0 }]))}` });
    assert.deepEqual(jsonQuery.json, [{ name: title('Main').replace(/_/g, ' ') }]);
    assert.equal(filteredOut.json.message, `An article named ${title('Main')} matching the filters was not found.`);
    const deep = `[{"field":"name","value":${'['.repeat(2000)}${']'.repeat(2000)}}]`;
    for (const query of [`?filters=${deep}`, '?filters=[{"field":"name"']) {
      const res = await article(title('Main'), { query });
      assert.equal(res.status, 400, res.text);
      assert.deepEqual(Object.keys(res.json).sort(), ['message', 'status']);
    }
    const missing = await article(`${PREFIX}No such page`);
    assert.equal(missing.status, 404);
    assert.equal(missing.json.status, 404);
    const head = await request(`${base}/articles/${encodeURIComponent(title('Main'))}`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.raw.length, 0);
  });

  it("describes the wiki as Enterprise's metadata does: its project, language, code and namespaces, the identifiers the other routes take", async () => {
    const info = (await (await fetch(`${WIKI_URL}/api.php?action=query&meta=siteinfo&siprop=general|namespaces&format=json&formatversion=2`)).json()) as { query: { general: Record<string, any>; namespaces: Record<string, { name: string; canonical?: string }> } };
    const { general, namespaces } = info.query;
    const projects = await request(`${base}/projects`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: {} });
    assert.equal(projects.status, 200, projects.text);
    assert.equal(projects.json.length, 1);
    const project = projects.json[0];
    assert.equal(project.identifier, general.wikiid);
    assert.equal(project.name, general.sitename);
    assert.equal(project.in_language.identifier, general.lang);
    // The record's own project is that one.
    assert.equal((await article(title('Main'), { query: '?fields=is_part_of.identifier' })).json[0].is_part_of.identifier, project.identifier);
    assert.deepEqual((await request(`${base}/projects/${project.identifier}`)).json, project);
    assert.equal((await request(`${base}/projects/nosuchwiki`)).status, 404);
    const language = (await request(`${base}/languages/${general.lang}`)).json;
    assert.equal(language.identifier, general.lang);
    assert.equal(language.direction, general.rtl ? 'rtl' : 'ltr');
    assert.equal(typeof language.name, 'string');
    const listed = (await request(`${base}/namespaces?fields=identifier`)).json.map((n: { identifier: number }) => n.identifier);
    assert.deepEqual(listed, [0, 6, 10, 14].filter((id) => namespaces[String(id)]));
    assert.equal((await request(`${base}/namespaces/10`)).json.description, namespaces['10']!.name);
    assert.equal((await request(`${base}/codes`)).json[0].identifier, project.code);
    assert.equal((await request(`${base}/codes?fields=nope`)).status, 400);
  });

  it("gives a page's structured contents: every heading once as a section, in order, with each paragraph's text and links", async () => {
    const res = await request(`${base}/structured-contents/${encodeURIComponent(title('Main'))}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: {} });
    assert.equal(res.status, 200, res.text);
    const record = res.json[0];
    assert.equal(record.abstract, 'Main is the Lead paragraph.\nA second lead paragraph.');
    const names: string[] = [];
    const walk = (parts: any[]) => parts.forEach((p) => p.type === 'section' && (names.push(p.name), walk(p.has_parts)));
    walk(record.sections);
    assert.deepEqual(names, ['Abstract', 'First', 'Nested', 'Second', 'References']);
    const first = record.sections[1];
    assert.deepEqual(first.has_parts.map((p: any) => p.type), ['paragraph', 'list', 'section']);
    assert.equal(first.has_parts[0].value, 'First section text with a Link.');
    assert.equal(first.has_parts[0].links[0].text, 'Link');
    assert.ok(first.has_parts[0].links[0].url.endsWith('/Link'), first.has_parts[0].links[0].url);
    assert.deepEqual(first.has_parts[1].has_parts.map((i: any) => i.value), ['one', 'two']);
    assert.equal(record.references.length, 1);
    assert.equal(record.references[0].text.value, 'A source, Cited.');
  });

  it('keeps a record current: a new redirect and a protection change the target, with an event carrying the record', async () => {
    const stream = listen(`${a.s.base}/wiki.test/v1/changes?include=record&fields=name,redirects,protection&prefix=${encodeURIComponent(PREFIX)}`);
    assert.equal((await stream.status).status, 200);
    try {
      await a.wiki.edit(title('Alias'), `#REDIRECT [[${title('Main').replace(/_/g, ' ')}]]`);
      const redirected = await waitFor('the record lists the new redirect', 20_000, async () => {
        const record = (await article(title('Main'))).json[0];
        return record.redirects.some((r: { name: string }) => r.name === title('Alias').replace(/_/g, ' ')) ? record : undefined;
      });
      assert.deepEqual(redirected.redirects.map((r: { name: string }) => r.name), (await wikiLists(title('Main'))).redirects);
      await waitFor("the target's record event", 20_000, async () => stream.events.find((e) => e.event === 'record' && e.data.title === title('Main') && e.data.record?.redirects?.length) ?? undefined);
      await a.wiki.protect(title('Main'));
      const protectedRecord = await waitFor('the record shows the protection', 20_000, async () => {
        const record = (await article(title('Main'))).json[0];
        return record.protection.length ? record : undefined;
      });
      assert.deepEqual(protectedRecord.protection, (await wikiLists(title('Main'))).protection);
      // Its event: the protection's own revision's (MediaWiki records one), or the record's.
      const event = await waitFor('an event carrying the record with the protection', 20_000, async () => stream.events.find((e) => e.data.title === title('Main') && e.data.record?.protection?.length) ?? undefined);
      assert.deepEqual(Object.keys(event.data.record).sort(), ['name', 'protection', 'redirects']);
      // An edit's event carries the record too; deletions carry none.
      await a.wiki.edit(title('Gone'), 'Soon deleted.');
      await waitFor('the edit event with its record', 20_000, async () => stream.events.find((e) => e.event === 'edit' && e.data.title === title('Gone') && e.data.record) ?? undefined);
      await a.wiki.delete(title('Gone'));
      const deletion = await waitFor('the deletion event', 20_000, async () => stream.events.find((e) => e.event === 'delete' && e.data.title === title('Gone')) ?? undefined);
      assert.equal(deletion.data.record, undefined);
    } finally {
      stream.close();
    }
  });

  it("streams the wiki's changes as Enterprise's Realtime does: records a line, deletions without text, resumable by offset", async () => {
    // As Enterprise's SDK asks: a GET with its parameters as a JSON body.
    const fields = ['name', 'version.identifier', 'namespace.identifier', 'is_part_of.identifier', 'visibility.text', 'article_body.html', 'event.*'];
    const ask = { fields, filters: [{ field: 'namespace.identifier', value: 0 }] };
    const stream = listenLines(`${base}/articles`, ask);
    const opened = await stream.status;
    assert.equal(opened.status, 200, opened.text);
    assert.equal(opened.headers['content-type'], 'application/x-ndjson');
    const name = title('Live').replace(/_/g, ' ');
    try {
      await a.wiki.edit(title('Live'), 'Streamed text.');
      const rev = await a.wiki.latestRevid(title('Live'));
      const update = await waitFor('the update line', 20_000, async () => stream.lines.find((l) => l.name === name && l.event.type === 'update' && l.version?.identifier === rev));
      assert.deepEqual(Object.keys(update).sort(), ['article_body', 'event', 'is_part_of', 'name', 'namespace', 'version', 'visibility']);
      assert.match(update.article_body.html, /Streamed text/);
      assert.equal(update.namespace.identifier, 0);
      assert.equal(update.event.partition, 0);
      assert.ok(Number.isSafeInteger(update.event.offset));
      assert.ok(Date.parse(update.event.date_created) <= Date.now());
      // The record a line carries is On-demand's, field for field.
      const onDemand = (await article(title('Live'), { method: 'POST', body: { fields: fields.filter((f) => f !== 'event.*') } })).json[0];
      assert.deepEqual({ ...update, event: undefined }, { ...onDemand, event: undefined });
      // A revision hidden (once it is no longer the newest): a visibility change, saying so, without text.
      await a.wiki.edit(title('Live'), 'Streamed again.');
      await a.wiki.hideRevision(title('Live'), rev);
      const hidden = await waitFor('the visibility-change line', 20_000, async () => stream.lines.find((l) => l.name === name && l.event.type === 'visibility-change'));
      assert.equal(hidden.version.identifier, rev);
      assert.deepEqual(hidden.visibility, { text: false });
      assert.equal(hidden.article_body, undefined);
      await a.wiki.delete(title('Live'));
      const deletion = await waitFor('the delete line', 20_000, async () => stream.lines.find((l) => l.name === name && l.event.type === 'delete'));
      assert.equal(deletion.article_body, undefined, 'a deletion carries no text');
      assert.equal(deletion.is_part_of.identifier, update.is_part_of.identifier);
      assert.ok(deletion.event.offset > update.event.offset);

      // Resumed at the update's offset (a POST this time): the update first (the page is gone now,
      // so the update says nothing; the deletion does), then the deletion.
      const resumed = listenLines(`${base}/articles`, { fields: ['name', 'event.*'], offsets: { 0: update.event.offset } }, 'POST');
      try {
        assert.equal((await resumed.status).status, 200);
        const again = await waitFor('the deletion, resumed', 20_000, async () => resumed.lines.find((l) => l.name === name && l.event.type === 'delete'));
        assert.equal(again.event.identifier, deletion.event.identifier);
        assert.ok(resumed.lines.every((l) => l.event.offset >= update.event.offset), 'nothing before the offset');
      } finally {
        resumed.close();
      }
      // Parts that leave the wiki's one partition out are sent nothing of it.
      const elsewhere = listenLines(`${base}/articles`, { parts: [1, 2], since: new Date(Date.now() - 120_000).toISOString() });
      try {
        assert.equal((await elsewhere.status).status, 200);
        await sleep(1500);
        assert.equal(elsewhere.lines.length, 0);
      } finally {
        elsewhere.close();
      }
    } finally {
      stream.close();
    }
    // What Enterprise refuses, in its error shape.
    for (const body of [{ fields: ['nope'] }, { filters: [{ field: 'no.such', value: 1 }] }, { parts: [10] }, { offsets: { 0: 'x' } }, { since: 'yesterday' }, { since: 9e15 }, { limit: 3 }]) {
      const refused = await stream.status.then(() => listenLines(`${base}/articles`, body, 'POST').status);
      assert.equal(refused.status, 400, JSON.stringify(body));
      const error = JSON.parse(refused.text!);
      assert.equal(error.status, 400);
      assert.equal(typeof error.message, 'string');
    }
  });

  it('writes, in a snapshot at T, the same line on-demand answers for the page at T', async () => {
    await sleep(1100);
    const at = Math.floor(Date.now() / 1000) * 1000;
    await sleep(1100);
    await a.wiki.edit(title('Main'), 'Changed after the snapshot\'s moment.');
    const out = path.join(shelf, 'wiki.test', new Date(at).toISOString().replace(/[:.]/g, ''));
    const report = await new SnapshotWriter(a.s.app.page.service, 'wiki.test').run(ctx, { at, namespaces: [0], prefix: title('Main'), out, pagesPerChunk: 1, concurrency: 1 });
    assert.ok(report.complete);
    const archive = fs.readdirSync(out).find((f) => f.endsWith('.tar.gz'))!;
    const lines = (await tarEntries(path.join(out, archive))).flatMap((e) => e.text.split('\n').filter(Boolean));
    const line = lines.find((l) => JSON.parse(l).name === title('Main').replace(/_/g, ' '))!;
    assert.ok(line, 'the page is in the snapshot');
    const atT = await article(title('Main'), { query: `?ts=${new Date(at).toISOString()}` });
    assert.equal(atT.status, 200, atT.text);
    // The line as the archive holds it (its newline too), in an array of one.
    assert.equal(atT.text, `[${line}\n]`);
    assert.doesNotMatch(line, /Changed after/);
    // Read again, the same bytes (its facts, kept by revision, are its own whatever the page became).
    assert.equal((await article(title('Main'), { query: `?ts=${new Date(at).toISOString()}` })).text, atT.text);

    // Offered over HTTP once finished: its description, its download (whole, by ranges, HEAD), its chunks.
    const listed = await request(`${base}/snapshots`);
    assert.equal(listed.status, 200);
    const identifier = archive.replace(/\.tar\.gz$/, '');
    const described = listed.json.find((s: { identifier: string }) => s.identifier === identifier);
    assert.ok(described, listed.text);
    assert.equal(described.namespace.identifier, 0);
    assert.equal(described.date_modified, new Date(at).toISOString());
    assert.equal(described.size.unit_text, 'MB');
    assert.equal((await request(`${base}/snapshots/${identifier}`)).json.identifier, identifier);
    const whole = await request(`${base}/snapshots/${identifier}/download`);
    assert.equal(whole.status, 200);
    assert.deepEqual(whole.raw, fs.readFileSync(path.join(out, archive)));
    const size = whole.raw.length;
    const first = await request(`${base}/snapshots/${identifier}/download`, { headers: { range: 'bytes=0-99' } });
    const rest = await request(`${base}/snapshots/${identifier}/download`, { headers: { range: 'bytes=100-', 'if-range': String(whole.headers.etag) } });
    assert.equal(first.status, 206);
    assert.equal(first.headers['content-range'], `bytes 0-99/${size}`);
    assert.equal(rest.status, 206);
    assert.deepEqual(Buffer.concat([first.raw, rest.raw]), whole.raw);
    const past = await request(`${base}/snapshots/${identifier}/download`, { headers: { range: `bytes=${size}-` } });
    assert.equal(past.status, 416);
    assert.equal(past.headers['content-range'], `bytes */${size}`);
    const head = await request(`${base}/snapshots/${identifier}/download`, { method: 'HEAD' });
    assert.equal(head.headers['content-length'], String(size));
    const chunks = await request(`${base}/snapshots/${identifier}/chunks`);
    assert.equal(chunks.json.length, described.chunks.length);
    const chunkLines: string[] = [];
    for (const chunk of described.chunks as string[]) {
      const got = await request(`${base}/snapshots/${identifier}/chunks/${chunk}/download`);
      assert.equal(got.status, 200);
      const file = path.join(shelf, `${chunk}.tar.gz`);
      fs.writeFileSync(file, got.raw);
      chunkLines.push(...(await tarEntries(file)).flatMap((e) => e.text.split('\n').filter(Boolean)));
    }
    assert.deepEqual(chunkLines, lines, 'the chunks hold the archive\'s lines, in order');
    // As Enterprise's SDK asks for descriptions: POSTs with fields; a chunk by its identifier or its index.
    const posted = await request(`${base}/snapshots/${identifier}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: { fields: ['identifier', 'size.*', 'chunks'] } });
    assert.equal(posted.status, 200, posted.text);
    assert.deepEqual(Object.keys(posted.json).sort(), ['chunks', 'identifier', 'size']);
    const chunkList = await request(`${base}/snapshots/${identifier}/chunks`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: {} });
    assert.deepEqual(chunkList.json.map((c: { identifier: string }) => c.identifier), described.chunks);
    const last = described.chunks.length - 1;
    const byId = await request(`${base}/snapshots/${identifier}/chunks/${described.chunks[last]}`);
    const byIndex = await request(`${base}/snapshots/${identifier}/chunks/${last}`);
    assert.equal(byId.status, 200, byId.text);
    assert.deepEqual(byIndex.json, byId.json);
    assert.equal(byId.json.identifier, `${identifier}_chunk_${last}`);
    assert.deepEqual(byId.json.in_language, described.in_language);
    assert.equal(byId.json.chunks, undefined);
    assert.deepEqual(byId.json, chunkList.json[last]);
    const lastChunk = await request(`${base}/snapshots/${identifier}/chunks/${last}/download`, { method: 'HEAD' });
    assert.equal(lastChunk.status, 200);
    assert.equal(byId.json.size.value, Math.round((Number(lastChunk.headers['content-length']) / 1048576) * 1000) / 1000);
    assert.equal((await request(`${base}/snapshots/${identifier}/chunks/${described.chunks.length}`)).status, 404);
    assert.equal((await request(`${base}/snapshots/${identifier}/chunks/01`)).status, 404);
    assert.ok(zlib.gunzipSync(whole.raw).length > 0);
  });

  it('does not offer a snapshot still being written', async () => {
    const unfinished = path.join(shelf, 'wiki.test', new Date(Date.now() + 60_000).toISOString().replace(/[:.]/g, ''));
    fs.mkdirSync(unfinished, { recursive: true });
    fs.writeFileSync(path.join(unfinished, 'my_wiki_namespace_0.tar.gz'), 'partial');
    const listed = await request(`${base}/snapshots`);
    assert.ok(listed.json.every((s: { date_modified: string }) => Date.parse(s.date_modified) < Date.now()), listed.text);
    const download = await request(`${base}/snapshots/my_wiki_namespace_0/download`);
    assert.notEqual(download.raw.toString(), 'partial');
    fs.rmSync(unfinished, { recursive: true, force: true });
  });

  it("makes a day's batch of the pages its changes named: each at its newest, the deleted as lines without text", async () => {
    // A corpus page no other test file links or redirects to: a redirect made to a page changes its record (its redirects), so it is in the day's batch.
    assert.equal((await article('Damphu_drum')).status, 200, 'a corpus page read, so stored, not changed');
    await new BatchMaker(a.s.app.page.service, new SnapshotShelf(shelf), { everyMs: 3600_000, namespaces: [0] }, a.s.app.log).make(ctx, 'wiki.test', () => false);
    const today = new Date().toISOString().slice(0, 10);
    const listed = await request(`${base}/batches/${today}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: {} });
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.json.length, 1);
    const { identifier, date_modified: at } = listed.json[0];
    assert.match(identifier, /_namespace_0$/);
    assert.deepEqual((await request(`${base}/batches/${today}/${identifier}`)).json, listed.json[0]);
    const download = await request(`${base}/batches/${today}/${identifier}/download`);
    assert.equal(download.status, 200);
    const lines = (await tarEntriesOf(download.raw, shelf)).flatMap((e) => e.text.split('\n').filter(Boolean));
    const byName = new Map(lines.map((l) => [JSON.parse(l).name as string, l]));
    // Edited today: its line is the one a snapshot of the batch's moment holds (On-demand at that moment).
    const main = byName.get(title('Main').replace(/_/g, ' '));
    assert.ok(main, [...byName.keys()].join(', '));
    assert.equal((await article(title('Main'), { query: `?ts=${at}` })).text, `[${main}\n]`);
    // Made and deleted today: a deletion, no text.
    for (const gone of ['Gone', 'Live']) {
      const line = JSON.parse(byName.get(title(gone).replace(/_/g, ' '))!);
      assert.equal(line.event.type, 'delete');
      assert.equal(line.article_body, undefined);
    }
    // Only what changed: a corpus page read (and stored) but not changed is not in it.
    assert.equal(byName.get('Damphu drum'), undefined);
    assert.equal((await request(`${base}/batches/${today}/nowiki_namespace_0`)).status, 404);
    for (const day of ['yesterday', '2026-02-30', '2026-13-01']) assert.equal((await request(`${base}/batches/${day}`)).status, 400, day);
    assert.deepEqual((await request(`${base}/batches/2001-01-01`)).json, []);
  });
});

/** Snapshots made on a schedule, offered once finished, the older ones dropped. */
describe('Enterprise snapshots made on a schedule', () => {
  let a: AgainstWiki;
  const shelf = tempDir('wikistore-schedule-');
  const old = path.join(shelf, 'wiki.test', '2020-01-01T000000000Z');

  before(async () => {
    // A finished snapshot of long ago: the next is due at once, and this one is dropped after it (keep: 1).
    fs.mkdirSync(old, { recursive: true });
    fs.writeFileSync(path.join(old, 'my_wiki_namespace_4.tar.gz'), 'old');
    fs.writeFileSync(path.join(old, 'manifest.json'), JSON.stringify({ wiki: 'my_wiki', date_modified: '2020-01-01T00:00:00.000Z', namespaces: [4], files: [{ name: 'my_wiki_namespace_4.tar.gz', bytes: 3, sha256: '0'.repeat(64), pages: 0 }] }));
    a = await startAgainstWiki({ snapshots: { dir: shelf, every: '1d', keep: 1, namespaces: [4], batches: '1h' } });
  });
  after(async () => {
    await a?.close();
  });

  it('makes the snapshot due, offers it once finished, and keeps the newest only', async () => {
    const base = `${a.s.base}/wiki.test/enterprise/v2`;
    const listed = await request(`${base}/snapshots`);
    assert.equal(listed.json[0]?.date_modified, '2020-01-01T00:00:00.000Z', 'the old one is offered until a newer is finished');
    const made = await waitFor('the scheduled snapshot', 180_000, async () => {
      const res = await request(`${base}/snapshots/my_wiki_namespace_4`);
      return res.status === 200 && res.json.date_modified !== '2020-01-01T00:00:00.000Z' ? res.json : undefined;
    });
    assert.ok(Date.now() - Date.parse(made.date_modified) < 180_000);
    assert.equal(made.namespace.identifier, 4);
    await waitFor('the old snapshot dropped', 10_000, async () => (fs.existsSync(old) ? undefined : true));
    const download = await request(`${base}/snapshots/my_wiki_namespace_4/download`);
    assert.equal(download.status, 200);
    const lines = (await tarEntriesOf(download.raw, shelf)).flatMap((e) => e.text.split('\n').filter(Boolean)).map((l) => JSON.parse(l));
    assert.ok(lines.length > 0 && lines.every((r) => r.namespace.identifier === 4), `${lines.length} project pages`);
    assert.ok(!fs.existsSync(path.join(shelf, 'wiki.test', '.making')), 'the claim is let go');
    // Batches on the schedule too (`batches: 1h`): today's, of the namespaces configured, offered once made.
    const today = new Date().toISOString().slice(0, 10);
    const batches = await waitFor("today's batch", 60_000, async () => {
      const res = await request(`${base}/batches/${today}`);
      return res.status === 200 && res.json.length ? res.json : undefined;
    });
    assert.deepEqual(batches.map((b: { identifier: string }) => b.identifier), ['my_wiki_namespace_4']);
    assert.equal(batches[0].chunks, undefined);
    assert.ok(!fs.existsSync(path.join(shelf, 'wiki.test', '.batching')), 'the batch claim is let go');
  });
});

/** The entries of a downloaded `.tar.gz`. */
async function tarEntriesOf(bytes: Buffer, dir: string): Promise<{ name: string; text: string }[]> {
  const file = path.join(dir, `download-${Date.now()}.tar.gz`);
  fs.writeFileSync(file, bytes);
  return tarEntries(file);
}
