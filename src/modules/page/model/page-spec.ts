import { TID_PATTERN } from '../../../util/tid.js';
import { PROPS } from './render.js';

/** OpenAPI fragments of the public content API; they validate requests as well as document them. */
const tags = ['page content'];
const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } });
const title = { name: 'title', in: 'path', required: true, schema: { type: 'string' }, description: 'Page title; a non-normalized title redirects to the normalized one' };
const prop = { name: 'prop', in: 'path', required: true, schema: { enum: PROPS } };
const pagingUpTo = (maximum: number) => [
  { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum }, description: `Items per page (at most ${maximum})` },
  { name: 'next', in: 'query', schema: { type: 'string', maxLength: 8192 }, description: 'Paging token from the previous page' },
];
const paging = pagingUpTo(1000);
/** The wiki is asked for history, so its pages are smaller. */
const historyPaging = pagingUpTo(500);
/**
 * A revision id in a path (a render tid is told apart from it by this): at most 15 digits, so
 * every one is a safe integer (MediaWiki's are 32-bit).
 */
export const REVID = /^[1-9]\d{0,14}$/;
const REVID_SCHEMA = { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER };
const revid = { name: 'revid', in: 'path', required: true, schema: REVID_SCHEMA, description: 'A MediaWiki revision id' };
const htmlForm = [
  { name: 'data-mw', in: 'query', schema: { enum: ['inline'] }, description: 'HTML with data-mw inline (2.x form), as MediaWiki serves it' },
  { name: 'accept', in: 'header', schema: { type: 'string' }, description: 'text/html; profile=".../Specs/HTML/2.x.y" for 2.x HTML (data-mw inline); default the stored 999.x; another version is a 406' },
];
const section = {
  name: 'section', in: 'query', schema: { type: 'integer', minimum: 0, maximum: 100000 },
  description: 'One section (html or wikitext) by its data-mw-section-id: 0 the lead, a section with its subsections',
};
const ts = { name: 'ts', in: 'query', schema: { type: 'string' }, description: 'A time (ISO 8601 or 20140101T20:23:22.100Z)' };
const content = {
  description: 'The content; ETag "{revid}/{tid}"; a redirect page says so in x-mediawiki-redirect and a Link header',
  content: {
    'text/html': { schema: { type: 'string' } },
    'application/json': { schema: { type: 'object' } },
    'text/plain': { schema: { type: 'string' } },
  },
};
const errors = {
  400: problem('Bad title, revision or time'),
  403: problem('The revision is hidden'),
  404: problem('No such page or revision, or the page was deleted'),
  503: problem('The wiki cannot be reached and nothing is stored'),
};
const listing = {
  description: 'One page of the listing and a paging token',
  content: { 'application/json': { schema: { type: 'object', properties: { items: { type: 'array' }, next: { type: 'string' } } } } },
};
const revision = {
  description: 'Revision metadata',
  content: {
    'application/json': {
      schema: {
        type: 'object',
        properties: {
          title: { type: 'string' }, rev: { type: 'integer' }, parent_id: { type: ['integer', 'null'] }, tid: { type: ['string', 'null'] }, page_id: { type: ['integer', 'null'] },
          timestamp: { type: ['string', 'null'] }, user_id: { type: ['integer', 'null'] }, user_text: { type: ['string', 'null'] },
          comment: { type: ['string', 'null'] }, minor: { type: ['boolean', 'null'] }, size: { type: ['integer', 'null'] },
          sha1: { type: ['string', 'null'] }, content_model: { type: ['string', 'null'] }, tags: { type: 'array', items: { type: 'string' } },
          hidden: { type: 'object' },
        },
      },
    },
  },
};

const displayOptions = [
  { name: 'sectionedit', in: 'query', schema: { enum: ['true', 'false'] }, description: 'Section edit links (default true; false for clients that do not edit)' },
  { name: 'toc', in: 'query', schema: { enum: ['true', 'false'] }, description: "The table of contents where MediaWiki's rules show one (default true)" },
  { name: 'stubthreshold', in: 'query', schema: { type: 'integer', minimum: 0, maximum: 1_000_000_000 }, description: 'Links to content pages shorter than this many bytes get class="stub" (default 0: none)' },
];
const display = {
  description: "HTML for reading: links marked by their targets' state today (red links, redirects, disambiguation pages, stubs), self links, section edit links, the TOC; ETag W/\"{revid}/{tid}/{link states}\"",
  content: { 'text/html': { schema: { type: 'string' } } },
};

export const pageSpecs = {
  display: {
    tags, summary: "The latest revision's display HTML (never a new render: made from the stored one, with today's link states)",
    parameters: [title, ...displayOptions],
    responses: { 200: display, ...errors, 400: problem('An unknown or bad display option (each named)') },
  },
  displayRevision: {
    tags, summary: 'Display HTML of a revision (id) or of one render (tid), with today\'s link states',
    parameters: [
      title,
      { name: 'revision', in: 'path', required: true, description: 'A revision id or a render tid (v1 time-uuid)', schema: { type: 'string', pattern: `${REVID.source}|${TID_PATTERN.source}` } },
      ...displayOptions,
    ],
    responses: { 200: display, ...errors, 400: problem('An unknown or bad display option (each named)') },
  },
  listPages: {
    tags, summary: 'Stored pages, paged, each {title, rev, tid}: the latest, or with ?ts= (wiki time) those that existed then, with the revision and render current then',
    parameters: [...paging, ts],
    responses: {
      200: {
        description: 'One page of the listing, a paging token, and whether the listing holds every content page of the wiki (at ?ts=, if given)',
        content: {
          'application/json': {
            schema: {
              type: 'object',
              properties: {
                items: { type: 'array', items: { type: 'object', properties: { title: { type: 'string' }, rev: { type: 'integer' }, tid: { type: ['string', 'null'] } } } },
                next: { type: 'string' },
                complete: {
                  type: 'boolean',
                  description: 'true once a backfill of every content page finished that began while the change follower was following (and ?ts= is not before it began); false: only the pages stored so far are listed',
                },
              },
            },
          },
        },
      },
    },
  },
  pageRedirect: { tags, summary: "Redirect to the page's HTML", parameters: [title], responses: { 302: { description: 'To {title}/html' }, 404: errors[404] } },
  listProperties: { tags, summary: 'List the properties of a page', parameters: [title], responses: { 200: listing, 404: errors[404] } },
  latest: { tags, summary: 'The latest content, or the content as of ?ts=', parameters: [title, prop, ts, section, ...htmlForm], responses: { 200: content, 406: problem('An HTML version that cannot be served'), ...errors } },
  listRenders: { tags, summary: 'Stored renders ({rev, tid}), newest first, paged', parameters: [title, prop, ...paging], responses: { 200: listing, 404: errors[404] } },
  byRevision: {
    tags, summary: 'Content by revision id (integer) or by render tid (immutable)',
    parameters: [
      title,
      prop,
      {
        name: 'revision', in: 'path', required: true, description: 'A revision id or a render tid (v1 time-uuid)',
        schema: { type: 'string', pattern: `${REVID.source}|${TID_PATTERN.source}` },
      },
      section,
      ...htmlForm,
    ],
    responses: { 200: content, 302: { description: 'The revision belongs to another page now' }, ...errors },
  },
  history: { tags, summary: 'Page history (revision metadata), newest first, paged', parameters: [title, ...historyPaging], responses: { 200: listing, 404: errors[404] } },
  revisionMetadata: {
    tags, summary: "One revision's metadata",
    parameters: [title, revid],
    responses: { 200: revision, ...errors },
  },
  revisionLookup: {
    tags, summary: 'The page (title) and latest render tid of a revision id',
    parameters: [revid],
    responses: { 200: revision, ...errors },
  },
};
