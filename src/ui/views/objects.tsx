import { Hono, type Context } from 'hono';
import type { Child } from 'hono/jsx';
import type { ObjectsPage, ObjectView } from '../../objstore/browser-routes.ts';
import { DashboardApiError, type DashboardApi } from '../api.ts';
import type { ObjstoreKeyView } from '../../objstore/key-routes.ts';
import { OBJSTORE_PERMISSIONS } from '../../objstore/types.ts';
import { readFixtures, type FixtureWorkspace } from '../fixtures.ts';
import {
  formList,
  formValues,
  optionalText,
  refusal,
  refusedAt,
  refusedForm,
  refusedStatus,
  type FormState,
} from '../forms.ts';
import { isFragmentRequest } from '../fragments.ts';
import { ErrorNote, Field, renderView, TableHead, FieldErrors } from '../layout.tsx';
import { Timestamp } from '../time.tsx';

interface Bucket {
  name: string;
  created_at: string | null;
  workspace_id: string | null;
  region: string;
  configured: boolean;
  public: boolean;
  workspace_folders: boolean;
  object_count: number;
  bytes: number;
}

/** What GET /_localplane/objstore/preview answers: a Parquet file's schema and first rows, or the start of a text. */
interface Preview {
  content_type: string | null;
  size: number;
  kind: 'parquet' | 'json' | 'text' | 'binary';
  schema?: { name: string; type: string }[];
  rows?: unknown[][];
  total_rows?: number;
  text?: string;
  truncated?: boolean;
}

const ADMIN_OBJSTORE = '/_localplane/objstore';

const bucketPath = (bucket: string) => `/ui/objects/${encodeURIComponent(bucket)}`;

/** A link in the browser, with its query (empty values left out). */
function href(path: string, query: Record<string, string | undefined> = {}): string {
  const search = new URLSearchParams(
    Object.entries(query).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
  const text = search.toString();
  return text === '' ? path : `${path}?${text}`;
}

const prefixLink = (bucket: string, prefix: string) => href(bucketPath(bucket), { prefix });
/** An object's page in the object browser. */
export const objectLink = (bucket: string, key: string) => href(`${bucketPath(bucket)}/object`, { key });
const downloadLink = (bucket: string, key: string) =>
  href(`${ADMIN_OBJSTORE}/buckets/${encodeURIComponent(bucket)}/object/content`, { key });

/** The folder a key is in (`a/b/` of `a/b/c.csv`; empty at the bucket's top). */
const folderOf = (key: string) => key.slice(0, key.lastIndexOf('/') + 1);

/** The dashboard reads an upload's form whole: files up to this size (larger ones go over S3, up to 5 GiB). */
const MAX_FORM_UPLOAD_BYTES = 1024 ** 3;
/** Room for a multipart form's own bytes (boundaries, headers, the key field) around the file. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

/** A key's segment as read: a hive partition `name=value` as `name = value`. */
export function segmentLabel(segment: string): string {
  const at = segment.indexOf('=');
  return at > 0 ? `${segment.slice(0, at)} = ${segment.slice(at + 1)}` : segment;
}

/** Bytes in the largest unit that keeps a number of at least 1 (1,024 a step). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${bytes} B` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** A key (or any slash-separated path) that may break after each `/`, so a long one wraps at its folders. */
export const KeyText = ({ text }: { text: string }) => (
  <>
    {text.split('/').map((part, index, parts) =>
      index === parts.length - 1 ? (
        part
      ) : (
        <>
          {part}/<wbr />
        </>
      ),
    )}
  </>
);

/** The folders of a prefix (`a/b/`) or of a key's folder, each with the prefix that lists it. */
function folderTrail(path: string): { label: string; prefix: string }[] {
  const segments = path.split('/').slice(0, -1);
  return segments.map((segment, index) => ({
    label: segmentLabel(segment),
    prefix: `${segments.slice(0, index + 1).join('/')}/`,
  }));
}

/** Buckets › bucket › folders … (› the object): where the page is, each step a link but the last. */
function Breadcrumbs({ bucket, path, last }: { bucket?: string; path?: string; last?: string }) {
  const steps: { label: string; link: string }[] = [{ label: 'Buckets', link: '/ui/objects' }];
  if (bucket !== undefined) {
    steps.push({ label: bucket, link: bucketPath(bucket) });
    for (const folder of folderTrail(path ?? ''))
      steps.push({ label: folder.label, link: prefixLink(bucket, folder.prefix) });
  }
  if (last !== undefined) steps.push({ label: last, link: '' });
  return (
    <nav aria-label="Breadcrumb" class="breadcrumbs">
      <ol>
        {steps.map((step, index) =>
          index === steps.length - 1 ? (
            <li>
              <span aria-current="page">{step.label}</span>
            </li>
          ) : (
            <li>
              <a href={step.link}>{step.label}</a>
            </li>
          ),
        )}
      </ol>
    </nav>
  );
}

/**
 * The object browser's pages are swapped in place by htmx (links and the search form are boosted
 * into #objects), each with its own URL; the download link is a plain one.
 */
function renderObjects(c: Context, content: Child) {
  return renderView(c, {
    title: 'Objects',
    active: 'objects',
    children: (
      <div id="objects" hx-boost="true" hx-target="#objects" hx-swap="innerHTML show:window:top">
        {content}
      </div>
    ),
    fragment: content,
  });
}

function BucketTable({ buckets }: { buckets: Bucket[] }) {
  return (
    <table aria-labelledby="buckets-heading" data-route="GET /_localplane/objstore/buckets">
      <TableHead
        columns={['Bucket', 'Workspace', 'Region', 'Kind', 'Objects', 'Size', 'Created']}
        numeric={['Objects', 'Size']}
      />
      <tbody>
        {buckets.map((bucket) => (
          <tr>
            <th scope="row">
              <a href={bucketPath(bucket.name)}>{bucket.name}</a>
            </th>
            <td class="mono">{bucket.workspace_id ?? <span class="muted">shared</span>}</td>
            <td>{bucket.region}</td>
            <td>
              {[
                bucket.configured ? 'configured' : 'created',
                bucket.public ? 'public' : '',
                bucket.workspace_folders ? 'a folder per workspace' : '',
              ]
                .filter(Boolean)
                .join(', ')}
            </td>
            <td class="num">{bucket.object_count}</td>
            <td class="num nowrap" title={`${bucket.bytes} bytes`}>
              {formatBytes(bucket.bytes)}
            </td>
            <td class="mono nowrap">{bucket.created_at && <Timestamp at={bucket.created_at} />}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function SearchForm({ bucket, search }: { bucket: string; search: string }) {
  return (
    <form
      role="search"
      class="inline"
      method="get"
      action={bucketPath(bucket)}
      data-route="GET /_localplane/objstore/buckets/:bucket/objects"
    >
      <Field label={`Search keys in ${bucket}`}>
        <input type="search" name="search" value={search} placeholder="part of a key, any case" />
      </Field>
      <button type="submit">Search</button>
      {search !== '' && <a href={bucketPath(bucket)}>Clear</a>}
    </form>
  );
}

/** A page of a prefix (folders, then objects) or of search results (objects by their whole key). */
function ObjectTable({ bucket, page }: { bucket: string; page: ObjectsPage }) {
  const searching = page.search !== null;
  const nameOf = (name: string) => (searching ? name : name.slice(page.prefix.length));
  if (page.prefixes.length === 0 && page.objects.length === 0) {
    return <p class="muted">{searching ? `No key holds “${page.search}”.` : 'Nothing here.'}</p>;
  }
  return (
    <table aria-label={searching ? 'Keys found' : 'Folders and objects'} class="objects">
      <TableHead columns={[searching ? 'Key' : 'Name', 'Size', 'Last modified']} numeric={['Size']} />
      <tbody>
        {page.prefixes.map((prefix) => (
          <tr class="folder">
            <th scope="row">
              <a href={prefixLink(bucket, prefix)}>{segmentLabel(nameOf(prefix).slice(0, -1))}/</a>
            </th>
            <td class="num muted">folder</td>
            <td></td>
          </tr>
        ))}
        {page.objects.map((object) => (
          <tr>
            <th scope="row" class="mono">
              <a href={objectLink(bucket, object.key)}>
                <KeyText text={nameOf(object.key) || object.key} />
              </a>
            </th>
            <td class="num nowrap" title={`${object.size} bytes`}>
              {formatBytes(object.size)}
            </td>
            <td class="mono nowrap">
              <Timestamp at={object.last_modified} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Key-value rows of a metadata table; an empty map shows as none. */
function MapRows({ label, values }: { label: string; values: Record<string, string> }) {
  const entries = Object.entries(values);
  return (
    <tr>
      <th scope="row">{label}</th>
      <td>
        {entries.length === 0 ? (
          <span class="muted">none</span>
        ) : (
          <dl class="pairs">
            {entries.map(([name, value]) => (
              <>
                <dt class="mono">{name}</dt>
                <dd class="mono">{value}</dd>
              </>
            ))}
          </dl>
        )}
      </td>
    </tr>
  );
}

function MetadataTable({ details }: { details: ObjectView }) {
  return (
    <table aria-label="Metadata" class="metadata" data-route="GET /_localplane/objstore/buckets/:bucket/object">
      <tbody>
        <tr>
          <th scope="row">Key</th>
          <td class="mono">
            <KeyText text={details.key} />
          </td>
        </tr>
        <tr>
          <th scope="row">Size</th>
          <td>
            {formatBytes(details.size)} <span class="muted">({details.size} bytes)</span>
          </td>
        </tr>
        <tr>
          <th scope="row">ETag</th>
          <td class="mono">{details.etag}</td>
        </tr>
        <tr>
          <th scope="row">Last modified</th>
          <td class="mono">
            <Timestamp at={details.last_modified} />
          </td>
        </tr>
        <tr>
          <th scope="row">Content type</th>
          <td class="mono">{details.content_type}</td>
        </tr>
        <tr>
          <th scope="row">Storage class</th>
          <td>{details.storage_class}</td>
        </tr>
        <MapRows
          label={details.checksum_type === null ? 'Checksums' : `Checksums (${details.checksum_type})`}
          values={details.checksums}
        />
        <tr>
          <th scope="row">Parts</th>
          <td>{details.parts_count ?? <span class="muted">put in one piece</span>}</td>
        </tr>
        <MapRows label="User metadata" values={details.user_metadata} />
        <MapRows label="Headers" values={details.headers} />
      </tbody>
    </table>
  );
}

const cellText = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value));

function SchemaTable({ schema }: { schema: { name: string; type: string }[] }) {
  return (
    <>
      <h3 id="preview-schema">Schema</h3>
      <table aria-labelledby="preview-schema">
        <TableHead columns={['Column', 'Type']} />
        <tbody>
          {schema.map((column) => (
            <tr>
              <th scope="row" class="mono">
                {column.name}
              </th>
              <td class="mono">{column.type}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

function RowsTable({ schema, rows, totalRows }: { schema: { name: string }[]; rows: unknown[][]; totalRows: number }) {
  return (
    <>
      <h3 id="preview-rows">
        First rows{' '}
        <span class="muted">
          ({rows.length} of {totalRows})
        </span>
      </h3>
      {/* Focusable, so the keyboard scrolls it as the mouse does. */}
      <div class="scroll" tabindex={0} role="region" aria-labelledby="preview-rows">
        <table aria-labelledby="preview-rows" class="rows">
          <TableHead columns={schema.map((column) => column.name)} />
          <tbody>
            {rows.map((row) => (
              <tr>
                {row.map((value) => (
                  <td
                    class={value === null ? 'mono muted' : 'mono'}
                    title={value === null ? undefined : cellText(value)}
                  >
                    {value === null ? 'null' : cellText(value)}
                  </td>
                ))}
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** JSON text indented two spaces a level; text that does not parse (JSON lines, say) as it is. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/**
 * The preview in two parts: what fits beside the metadata (a Parquet schema, a note), and what needs the page's width
 * (rows, text).
 */
function previewParts(preview: Preview | DashboardApiError): { beside: Child; below: Child } {
  if (preview instanceof DashboardApiError) return { beside: <ErrorNote message={preview.detail} />, below: null };
  switch (preview.kind) {
    case 'parquet': {
      const schema = preview.schema ?? [];
      const rows = preview.rows ?? [];
      return {
        beside: <SchemaTable schema={schema} />,
        below: <RowsTable schema={schema} rows={rows} totalRows={preview.total_rows ?? rows.length} />,
      };
    }
    case 'binary':
      return { beside: <p class="muted">Binary content: download it to look inside.</p>, below: null };
    default: {
      const what = preview.kind === 'json' ? 'JSON' : 'Text';
      return {
        beside: (
          <p class="muted">
            {preview.truncated
              ? `${what}: its start is shown below; download it for the rest.`
              : `${what}, shown below.`}
          </p>
        ),
        below: (
          <pre aria-label={`Content (${preview.kind})`} tabindex={0}>
            {preview.kind === 'json' && !preview.truncated ? prettyJson(preview.text ?? '') : (preview.text ?? '')}
          </pre>
        ),
      };
    }
  }
}

const workspaceName = (workspaces: FixtureWorkspace[], id: string | null) =>
  id === null ? 'shared' : (workspaces.find((workspace) => workspace.id === id)?.name ?? id);

/** The objstore's key pairs (never their secrets), each with its revoke button. */
function KeyTable({ keys, workspaces }: { keys: ObjstoreKeyView[]; workspaces: FixtureWorkspace[] }) {
  return (
    <table aria-labelledby="keys-heading" data-route="GET /_localplane/objstore/keys">
      <TableHead columns={['Access key id', 'Permissions', 'Account', '']} />
      <tbody>
        {keys.map((key) => (
          <tr>
            <th scope="row" class="mono">
              {key.access_key_id}
            </th>
            <td>{key.permissions.join(', ')}</td>
            <td>{workspaceName(workspaces, key.workspace_id)}</td>
            <td>
              <form
                method="post"
                action={`/ui/objects/keys/${encodeURIComponent(key.access_key_id)}/delete`}
                hx-confirm={`Revoke the key pair ${key.access_key_id}? Clients using it are refused from then on.`}
                data-route="DELETE /_localplane/objstore/keys/:access_key_id"
              >
                <button type="submit" class="danger" aria-label={`Revoke ${key.access_key_id}`}>
                  Revoke
                </button>
              </form>
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function KeyForm({ workspaces, state }: { workspaces: FixtureWorkspace[]; state: FormState }) {
  const values = state.values ?? {};
  const granted = (values.permissions ?? 'get,create,delete,multipart').split(',');
  return (
    <form
      method="post"
      action="/ui/objects/keys"
      aria-labelledby="new-key-heading"
      data-route="POST /_localplane/objstore/keys"
    >
      <h3 id="new-key-heading">New key pair</h3>
      <FieldErrors state={state}>
        <div class="inline">
          <Field label="Access key id">
            <input name="access_key_id" value={values.access_key_id} required />
          </Field>
          <Field label="Secret access key">
            <input name="secret_access_key" type="password" autocomplete="new-password" required />
          </Field>
          <Field label="Account">
            <select name="workspace_id">
              <option value="">shared</option>
              {workspaces.map((workspace) => (
                <option value={workspace.id} selected={workspace.id === values.workspace_id}>
                  {workspace.name}
                </option>
              ))}
            </select>
          </Field>
          <fieldset class="inline">
            <legend>Permissions</legend>
            {OBJSTORE_PERMISSIONS.map((permission) => (
              <label class="check">
                <input type="checkbox" name="permissions" value={permission} checked={granted.includes(permission)} />
                {permission}
              </label>
            ))}
          </fieldset>
          <button type="submit">Add key pair</button>
        </div>
      </FieldErrors>
      {state.error && <ErrorNote message={state.error} />}
    </form>
  );
}

/** The export that wrote an object, from its key's `export_id=<id>/` folder. */
const exportIdOf = (key: string) => key.match(/(?:^|\/)export_id=([0-9a-f-]{36})\//)?.[1];

/**
 * SQL over the rows of an export file's partition: the runs view's Hive keys (session_id, year, month, day) of the
 * key's folders.
 */
export function partitionQuery(key: string): string {
  const conditions = [...key.matchAll(/(?<=^|\/)(session_id|year|month|day)=([^/]+)(?=\/)/g)].map(([, name, value]) =>
    /^\d+$/.test(value!) ? `${name} = ${value}` : `${name} = '${value!.replaceAll("'", "''")}'`,
  );
  return `SELECT *\nFROM runs${conditions.length > 0 ? `\nWHERE ${conditions.join(' AND ')}` : ''}\nLIMIT 100`;
}

/** Download, copies of the key and its S3 URI, and for an export's file its export and SQL over its partition. */
function ObjectActions({ bucket, objectKey }: { bucket: string; objectKey: string }) {
  const exportId = exportIdOf(objectKey);
  return (
    <p class="actions">
      <a href={downloadLink(bucket, objectKey)} download hx-boost="false" class="button">
        Download
      </a>
      <button type="button" data-copy={objectKey}>
        Copy key
      </button>
      <button type="button" data-copy={`s3://${bucket}/${objectKey}`}>
        Copy S3 URI
      </button>
      {exportId && (
        <>
          <a href={`/ui/exports/${exportId}`} hx-boost="false">
            The export that wrote it
          </a>
          <a
            href={`/ui/sql?${new URLSearchParams({ export_id: exportId, sql: partitionQuery(objectKey) })}`}
            hx-boost="false"
          >
            Query in SQL
          </a>
        </>
      )}
    </p>
  );
}

/**
 * A file uploaded into the folder shown: its key is the one typed, or the folder (as typed, ending in `/`) and the
 * file's name.
 */
function UploadForm({ bucket, prefix, state }: { bucket: string; prefix: string; state: FormState }) {
  return (
    <section aria-labelledby="upload-heading">
      <h2 id="upload-heading">Upload</h2>
      <form
        class="inline"
        method="post"
        action={href(`${bucketPath(bucket)}/upload`, { prefix })}
        enctype="multipart/form-data"
        hx-encoding="multipart/form-data"
        aria-labelledby="upload-heading"
        data-route="PUT /_localplane/objstore/buckets/:bucket/object"
      >
        <FieldErrors state={state}>
          <Field label="File">
            <input type="file" name="file" required />
          </Field>
          <Field label="Key (ending in /: that folder and the file's name)">
            <input name="key" value={state.values?.key ?? prefix} size={40} spellcheck={false} />
          </Field>
          <button type="submit">Upload</button>
        </FieldErrors>
      </form>
      {state.error && <ErrorNote message={state.error} />}
    </section>
  );
}

function DeleteForm({ bucket, objectKey }: { bucket: string; objectKey: string }) {
  return (
    <form
      method="post"
      action={href(`${bucketPath(bucket)}/delete`, { prefix: folderOf(objectKey) })}
      hx-confirm={`Delete ${objectKey} from ${bucket}? Its bytes are gone for good.`}
      data-route="DELETE /_localplane/objstore/buckets/:bucket/object"
    >
      <input type="hidden" name="key" value={objectKey} />
      <button type="submit" class="danger">
        Delete
      </button>
    </form>
  );
}

/** /ui/objects: buckets, their folders and objects, search by key, an object's metadata, download and preview. */
export function objectsView(api: DashboardApi) {
  const app = new Hono();

  async function bucketsPage(c: Context, keyForm: FormState = {}, status = 200) {
    const [{ buckets }, keys, fixtures] = await Promise.all([
      api.get<{ buckets: Bucket[] }>(`${ADMIN_OBJSTORE}/buckets`),
      api.get<ObjstoreKeyView[]>(`${ADMIN_OBJSTORE}/keys`),
      readFixtures(api),
    ]);
    c.status(refusedStatus(c, status) as 200);
    return renderObjects(
      c,
      <>
        <Breadcrumbs />
        <h2 id="buckets-heading">Buckets</h2>
        <BucketTable buckets={buckets} />
        <h2 id="keys-heading">Key pairs</h2>
        <KeyTable keys={keys} workspaces={fixtures.workspaces} />
        <KeyForm workspaces={fixtures.workspaces} state={keyForm} />
      </>,
    );
  }

  app.get('/', (c) => bucketsPage(c));

  /** After a key's change: the buckets page, in place for htmx (boosted forms), else by a redirect. */
  const keyChanged = (c: Context) =>
    isFragmentRequest(c) ? bucketsPage(c) : c.redirect('/ui/objects#keys-heading', 303);

  app.post('/keys', async (c) => {
    const permissions = await formList(c, 'permissions');
    const fields = await formValues(c);
    const text = (name: string) => fields[name] ?? '';
    const values = {
      access_key_id: text('access_key_id'),
      // Named so that a refusal of the secret finds its field; the secret itself is never shown again.
      secret_access_key: '',
      workspace_id: text('workspace_id'),
      permissions: permissions.join(','),
    };
    try {
      await api.json('POST', `${ADMIN_OBJSTORE}/keys`, {
        body: {
          access_key_id: values.access_key_id,
          secret_access_key: text('secret_access_key'),
          permissions,
          workspace_id: optionalText(values.workspace_id),
        },
      });
    } catch (error) {
      // What is about no field (a key of that id exists) is about the id.
      const { status, state } = refusedAt('access_key_id', error, values);
      return bucketsPage(c, state, status);
    }
    return keyChanged(c);
  });

  app.post('/keys/:access_key_id/delete', async (c) => {
    try {
      await api.json('DELETE', `${ADMIN_OBJSTORE}/keys/${encodeURIComponent(c.req.param('access_key_id'))}`);
    } catch (error) {
      const { status, detail } = refusal(error);
      return bucketsPage(c, { error: detail }, status);
    }
    return keyChanged(c);
  });

  /**
   * A bucket's folder (or search) as the query asks, with the upload form: the refusal of an upload or a delete shown,
   * with `status`.
   */
  async function bucketPage(c: Context, refused: { upload?: FormState; deleteError?: string } = {}, status = 200) {
    const bucket = c.req.param('bucket')!;
    const prefix = c.req.query('prefix') ?? '';
    const search = c.req.query('search') ?? '';
    const cursor = c.req.query('cursor');
    // A search covers the whole bucket; otherwise one folder at a time.
    const listing = search === '' ? { prefix } : { search };
    const page = await api.get<ObjectsPage>(
      href(`${ADMIN_OBJSTORE}/buckets/${encodeURIComponent(bucket)}/objects`, {
        ...listing,
        delimiter: search === '' ? '/' : undefined,
        cursor,
      }),
    );
    c.status(refusedStatus(c, status) as 200);
    return renderObjects(
      c,
      <>
        <Breadcrumbs bucket={bucket} path={search === '' ? prefix : ''} />
        {refused.deleteError && <ErrorNote message={refused.deleteError} />}
        <SearchForm bucket={bucket} search={search} />
        {search !== '' && <h2>Keys holding “{search}”</h2>}
        <ObjectTable bucket={bucket} page={page} />
        {(cursor !== undefined || page.next_cursor !== null) && (
          <nav aria-label="Pages" class="pages">
            {cursor !== undefined && <a href={href(bucketPath(bucket), listing)}>First page</a>}
            {page.next_cursor !== null && (
              <a href={href(bucketPath(bucket), { ...listing, cursor: page.next_cursor })}>Next page</a>
            )}
          </nav>
        )}
        <UploadForm bucket={bucket} prefix={search === '' ? prefix : ''} state={refused.upload ?? {}} />
      </>,
    );
  }

  app.get('/:bucket', (c) => bucketPage(c));

  const objectPathOf = (bucket: string, key: string) =>
    href(`${ADMIN_OBJSTORE}/buckets/${encodeURIComponent(bucket)}/object`, { key });

  app.post('/:bucket/upload', async (c) => {
    const bucket = c.req.param('bucket');
    // The form is read whole into memory: one larger than that is refused unread.
    const declared = Number(c.req.header('content-length'));
    if (!(declared <= MAX_FORM_UPLOAD_BYTES + FORM_OVERHEAD_BYTES)) {
      const unsized = Number.isNaN(declared);
      const error = unsized
        ? 'The upload cannot be read: it has no Content-Length.'
        : `The dashboard takes files up to ${formatBytes(MAX_FORM_UPLOAD_BYTES)}; put larger ones over S3.`;
      return bucketPage(c, { upload: { fieldErrors: { file: error } } }, unsized ? 411 : 413);
    }
    const { key: keyField = '' } = await formValues(c);
    // The form's file (formValues keeps its text fields; the body is parsed once).
    const { file } = await c.req.parseBody();
    // A form sent with no file chosen has a nameless, empty one.
    if (!(file instanceof File) || file.name === '')
      return bucketPage(
        c,
        { upload: { values: { key: keyField }, fieldErrors: { file: 'Choose a file to upload.' } } },
        400,
      );
    const key = keyField === '' || keyField.endsWith('/') ? `${keyField}${file.name}` : keyField;
    try {
      await api.json('PUT', objectPathOf(bucket, key), { file });
    } catch (error) {
      // The API's 422 is about the key (its length, its characters); its 413 about the file's size.
      const values = { key: keyField };
      const tooLarge = error instanceof DashboardApiError && error.status === 413;
      const { status, state } = tooLarge ? refusedAt('file', error, values) : refusedForm(error, values);
      return bucketPage(c, { upload: state }, status);
    }
    return c.redirect(prefixLink(bucket, folderOf(key)), 303);
  });

  app.post('/:bucket/delete', async (c) => {
    const bucket = c.req.param('bucket');
    const { key = '' } = await formValues(c);
    try {
      await api.json('DELETE', objectPathOf(bucket, key));
    } catch (error) {
      const { status, detail } = refusal(error);
      return bucketPage(c, { deleteError: detail }, status);
    }
    return c.redirect(prefixLink(bucket, folderOf(key)), 303);
  });

  app.get('/:bucket/object', async (c) => {
    const bucket = c.req.param('bucket');
    const key = c.req.query('key') ?? '';
    const [details, preview] = await Promise.all([
      api.get<ObjectView>(objectPathOf(bucket, key)),
      api.get<Preview>(href(`${ADMIN_OBJSTORE}/preview`, { bucket, key })).catch((error: unknown) => {
        if (error instanceof DashboardApiError) return error;
        throw error;
      }),
    ]);
    const name = key.slice(key.lastIndexOf('/') + 1) || key;
    const { beside, below } = previewParts(preview);
    return renderObjects(
      c,
      <>
        <Breadcrumbs bucket={bucket} path={key} last={name} />
        <div class="split">
          <section aria-labelledby="metadata-heading">
            <h2 id="metadata-heading">Object</h2>
            <MetadataTable details={details} />
            <ObjectActions bucket={bucket} objectKey={key} />
            <DeleteForm bucket={bucket} objectKey={key} />
          </section>
          <section aria-labelledby="preview-heading" data-route="GET /_localplane/objstore/preview">
            <h2 id="preview-heading">Preview</h2>
            {beside}
          </section>
        </div>
        {below}
      </>,
    );
  });

  return app;
}
