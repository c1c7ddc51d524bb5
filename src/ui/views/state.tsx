import type { State } from '../../admin/schemas.ts';
import { Hono, type Context } from 'hono';
import { DashboardApiError, type DashboardApi } from '../api.ts';
import {
  formValues,
  optionalNumber,
  refusal,
  refusedAt,
  refusedForm,
  refusedStatus,
  type FormState,
  type FormValues,
} from '../forms.ts';
import { ErrorNote, Field, FieldErrors, Options, renderView, TableHead } from '../layout.tsx';
import { SNAPSHOT_NAME_RULE, type SavedSnapshot } from '../../snapshots/folder.ts';
import { Timestamp } from '../time.tsx';
import { MAX_SNAPSHOT_BYTES, MAX_SNAPSHOT_SIZE_IN_WORDS } from '../../snapshots/format.ts';
import { TIERS } from '../../workspaces/store.ts';

/** GET /_localplane/config: numbers, and the seconds each revision step takes. */
type Limits = Record<string, number> & { revision_step_seconds: Record<string, number> };

/** The limits' fields as the form names them: each key, a revision step's as `revision_step_seconds.<STATUS>`. */
const limitFields = (limits: Limits): [string, number][] =>
  Object.entries(limits).flatMap(([name, value]): [string, number][] =>
    typeof value === 'number'
      ? [[name, value]]
      : Object.entries(value).map(([status, seconds]): [string, number] => [`${name}.${status}`, seconds]),
  );

/**
 * The PATCH body of the fields typed differently from the limits in force (a revision step's under
 * revision_step_seconds); what is not a number goes as typed, for the API to refuse in its words.
 */
function limitsPatch(values: FormValues, limits: Limits): { patch: Record<string, unknown>; changed: string[] } {
  const patch: Record<string, unknown> = {};
  const changed: string[] = [];
  for (const [field, current] of limitFields(limits)) {
    const typed = optionalNumber(values[field]);
    if (typed === undefined || typed === current) continue;
    changed.push(field);
    const [name, status] = field.split('.') as [string, string | undefined];
    if (status === undefined) patch[name] = typed;
    else patch[name] = { ...(patch[name] as object | undefined), [status]: typed };
  }
  return { patch, changed };
}

/** The forms that show a refusal at their fields. */
type FieldForm = 'snapshot' | 'tier' | 'limits' | 'upload';

/**
 * What an action did, or what the API refused: shown above the panel, focused so that a keyboard user lands on it; a
 * refusal about a form's fields is shown at them instead (`refused`, what is about none of them).
 */
type ActionOutcome = { done: string } | { refused?: string; status: number; form?: FieldForm; state?: FormState };

/** Room for a multipart form's own bytes (boundaries, headers, the name field) around the file. */
const FORM_OVERHEAD_BYTES = 64 * 1024;

/** SNAPSHOT_NAME as an input's pattern (the whole value, the `v` flag: `-` escaped in a class). */
const SNAPSHOT_NAME_PATTERN = String.raw`(?!\.)[A-Za-z0-9._\-]{1,128}`;

const CONFIRM_RESET = 'Reset to the seed? What is not saved in a snapshot is lost.';
const confirmRestore = (name: string) =>
  `Replace the whole state with ${name}? What is not saved in a snapshot is lost.`;
const confirmDelete = (name: string) => `Delete the saved snapshot ${name}?`;
const CONFIRM_UPLOAD = 'Upload this file and replace the whole state with it? What is not saved in a snapshot is lost.';

function sizeText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 ** 2) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 ** 2).toFixed(1)} MiB`;
}

/** A name for the next snapshot from the emulator clock: `2026-11-01T00-00-00.snapshot`. */
const suggestedName = (now: string) => `${now.slice(0, 19).replaceAll(':', '-')}.snapshot`;

/** The uploaded file's own name as a snapshot name: what the name rule does not take becomes `-`, no leading dot. */
const nameOfFile = (fileName: string) => fileName.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^\.+/, '');

/**
 * A form whose submission htmx posts to /ui/state/<action>, answered with the panel, after a confirmation when
 * `confirm` says so.
 */
function actionAttributes(action: string, confirm?: string) {
  return {
    'hx-post': `/ui/state/${action}`,
    'hx-target': '#state-panel',
    'hx-swap': 'outerHTML',
    ...(confirm ? { 'hx-confirm': confirm } : {}),
  };
}

/**
 * /ui/state: reset (everything or one workspace), save a snapshot, the saved snapshots (download, restore, delete),
 * restore from a file.
 */
export function stateView(api: DashboardApi) {
  const app = new Hono();

  async function panel(outcome?: ActionOutcome) {
    const refused = outcome && 'status' in outcome ? outcome : undefined;
    /** The state of a form of the panel, if it was the one refused. */
    const stateOf = (form: FieldForm) => (refused?.form === form ? refused.state : undefined);
    const [clock, state, saved, limits] = await Promise.all([
      api.get<{ now: string; frozen: boolean }>('/_localplane/clock'),
      api.get<State>('/_localplane/state'),
      api.get<{ folder: string; snapshots: SavedSnapshot[] }>('/_localplane/snapshots'),
      api.get<Limits>('/_localplane/config'),
    ]);
    return (
      <div id="state-panel">
        {outcome && 'done' in outcome && (
          <p class="notice" role="status" tabindex={-1} autofocus>
            {outcome.done}
          </p>
        )}
        {refused?.refused && (
          <div tabindex={-1} autofocus={!refused.state?.fieldErrors}>
            <ErrorNote message={refused.refused} />
          </div>
        )}
        <p class="muted">
          Emulator clock: <span class="mono">{clock.now}</span> ({clock.frozen ? 'frozen' : 'running'}). A snapshot
          holds the database, the objstore, the ids, the clock and the limits.
        </p>

        <section aria-labelledby="reset-heading">
          <h2 id="reset-heading">Reset</h2>
          <form class="inline" {...actionAttributes('reset', CONFIRM_RESET)} data-route="POST /_localplane/reset">
            <Field label="What to reset">
              <select name="workspace_id">
                <option value="">Everything (state, objstore, knobs, clock)</option>
                {state.workspaces.map((workspace) => (
                  <option value={workspace.id}>
                    Workspace {workspace.name} ({workspace.tier}) only
                  </option>
                ))}
              </select>
            </Field>
            <button type="submit" class="danger">
              Reset
            </button>
          </form>
        </section>

        <section aria-labelledby="save-heading">
          <h2 id="save-heading">Save a snapshot</h2>
          <form class="inline" {...actionAttributes('snapshot')} data-route="POST /_localplane/snapshot">
            <FieldErrors state={stateOf('snapshot')}>
              <Field label="File name">
                <input
                  name="name"
                  required
                  maxlength={128}
                  pattern={SNAPSHOT_NAME_PATTERN}
                  title={SNAPSHOT_NAME_RULE}
                  size={34}
                  value={stateOf('snapshot')?.values?.name ?? suggestedName(clock.now)}
                  spellcheck={false}
                  aria-describedby="name-rule"
                />
              </Field>
              <button type="submit" class="primary">
                Save
              </button>
            </FieldErrors>
          </form>
          <p class="muted" id="name-rule">
            Letters, digits, ".", "-" and "_"; a file of that name is replaced.
          </p>
        </section>

        <section aria-labelledby="saved-heading">
          <h2 id="saved-heading">Saved snapshots</h2>
          <p class="muted" data-route="GET /_localplane/snapshots">
            In <span class="mono">{saved.folder}</span>, newest first.
          </p>
          {saved.snapshots.length === 0 ? (
            <p>No saved snapshot yet.</p>
          ) : (
            <table aria-labelledby="saved-heading">
              <TableHead columns={['Name', 'Size', 'Saved (file time)', 'Actions']} numeric={['Size']} />
              <tbody>
                {saved.snapshots.map((snapshot) => (
                  <tr>
                    <th scope="row" class="mono">
                      {snapshot.name}
                    </th>
                    <td class="num">{sizeText(snapshot.bytes)}</td>
                    <td>
                      <Timestamp at={snapshot.modified_at} />
                    </td>
                    <td>
                      <div class="actions">
                        <a
                          href={`/_localplane/snapshots/${encodeURIComponent(snapshot.name)}`}
                          download={snapshot.name}
                        >
                          Download {snapshot.name}
                        </a>
                        <form
                          {...actionAttributes('restore', confirmRestore(snapshot.name))}
                          data-route="POST /_localplane/restore"
                        >
                          <input type="hidden" name="name" value={snapshot.name} />
                          <button type="submit">Restore {snapshot.name}</button>
                        </form>
                        <form
                          {...actionAttributes('delete', confirmDelete(snapshot.name))}
                          data-route="DELETE /_localplane/snapshots/:name"
                        >
                          <input type="hidden" name="name" value={snapshot.name} />
                          <button type="submit" class="danger">
                            Delete {snapshot.name}
                          </button>
                        </form>
                      </div>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>

        <section aria-labelledby="upload-heading">
          <h2 id="upload-heading">Restore from a file</h2>
          <form
            class="inline"
            {...actionAttributes('upload', CONFIRM_UPLOAD)}
            hx-encoding="multipart/form-data"
            data-route="PUT /_localplane/snapshots/:name, POST /_localplane/restore"
          >
            <FieldErrors state={stateOf('upload')}>
              <Field label="Snapshot file">
                <input type="file" name="file" required />
              </Field>
              <Field label="Save as (default: the file's name)">
                <input
                  name="name"
                  value={stateOf('upload')?.values?.name}
                  maxlength={128}
                  pattern={SNAPSHOT_NAME_PATTERN}
                  title={SNAPSHOT_NAME_RULE}
                  size={34}
                  spellcheck={false}
                />
              </Field>
              <button type="submit">Upload and restore</button>
            </FieldErrors>
          </form>
        </section>

        <section id="plans" aria-labelledby="plans-heading">
          <h2 id="plans-heading">Workspaces' plans</h2>
          <p class="muted">Bulk exports need the Plus or Enterprise plan; a developer workspace's are refused.</p>
          <table aria-labelledby="plans-heading">
            <TableHead columns={['Workspace', 'Plan', 'Change']} />
            <tbody>
              {state.workspaces.map((workspace) => (
                <tr>
                  <th scope="row">{workspace.name}</th>
                  <td>{workspace.tier}</td>
                  <td>
                    <form
                      class="inline"
                      {...actionAttributes('tier')}
                      data-route="PUT /_localplane/workspaces/:workspace_id/tier"
                    >
                      <input type="hidden" name="workspace_id" value={workspace.id} />
                      <FieldErrors
                        state={stateOf('tier')?.values?.workspace_id === workspace.id ? stateOf('tier') : undefined}
                      >
                        <Field label={`Plan of ${workspace.name}`}>
                          <select name="tier">
                            <Options choices={TIERS} selected={workspace.tier} />
                          </select>
                        </Field>
                        <button type="submit">Change plan</button>
                      </FieldErrors>
                    </form>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>

        <section id="limits" aria-labelledby="limits-heading">
          <h2 id="limits-heading">Limits</h2>
          <p class="muted">
            The limits in force (<span class="mono">GET /_localplane/config</span>); a changed field is sent to{' '}
            <span class="mono">PATCH /_localplane/config</span>, the others are left as they are. A reset puts back
            those the instance started with.
          </p>
          <form
            class="limits"
            {...actionAttributes('limits')}
            data-route="GET /_localplane/config, PATCH /_localplane/config"
          >
            <FieldErrors state={stateOf('limits')}>
              <div class="limit-fields">
                {limitFields(limits).map(([field, value]) => (
                  <Field label={field}>
                    <input
                      name={field}
                      type="number"
                      step="any"
                      value={stateOf('limits')?.values?.[field] ?? String(value)}
                      required
                    />
                  </Field>
                ))}
              </div>
              <button type="submit" class="primary">
                Change limits
              </button>
            </FieldErrors>
          </form>
        </section>
      </div>
    );
  }

  const page = async (c: Context, outcome?: ActionOutcome) => {
    const content = await panel(outcome);
    if (outcome && 'status' in outcome) c.status(refusedStatus(c, outcome.status) as 200);
    return renderView(c, { title: 'State', active: 'state', children: content });
  };

  /**
   * Runs an action through the API and answers the panel with what it did, or the API's refusal; a form that shows
   * refusals at its fields gets them from `refusedState`.
   */
  const act =
    (
      run: (values: FormValues, c: Context) => Promise<string>,
      form?: { name: FieldForm; refusedState: (error: unknown, values: FormValues) => FormState },
    ) =>
    async (c: Context) => {
      let outcome: ActionOutcome;
      let values: FormValues = {};
      try {
        values = await formValues(c);
        outcome = { done: await run(values, c) };
      } catch (error) {
        const { status, detail } = refusal(error);
        if (form) {
          const state = form.refusedState(error, values);
          outcome = { refused: state.error, status, form: form.name, state };
        } else outcome = { refused: detail, status };
      }
      return page(c, outcome);
    };
  /** A refusal of a form with one field the API judges: at that field. */
  const atField = (field: string) => (error: unknown, values: FormValues) => refusedAt(field, error, values).state;

  const snapshotPath = (name: string) => `/_localplane/snapshots/${encodeURIComponent(name)}`;

  app.get('/', (c) => page(c));

  app.post(
    '/reset',
    act(async (values) => {
      const workspaceId = values.workspace_id ?? '';
      if (workspaceId === '') {
        await api.json('POST', '/_localplane/reset', { body: {} });
        return 'Everything is back to the seed.';
      }
      await api.json('POST', '/_localplane/reset', { body: { workspace_id: workspaceId } });
      const { workspaces } = await api.get<State>(`/_localplane/state?workspace_id=${encodeURIComponent(workspaceId)}`);
      return `Workspace ${workspaces[0]?.name ?? workspaceId} is back to the seed.`;
    }),
  );

  app.post(
    '/snapshot',
    act(
      async (values) => {
        const saved = await api.json<SavedSnapshot>('POST', '/_localplane/snapshot', {
          body: { name: values.name ?? '' },
        });
        return `Saved ${saved.name} (${sizeText(saved.bytes)}).`;
      },
      { name: 'snapshot', refusedState: atField('name') },
    ),
  );

  app.post(
    '/restore',
    act(async (values) => {
      const name = values.name ?? '';
      await api.json('POST', '/_localplane/restore', { body: { name } });
      return `Restored ${name}.`;
    }),
  );

  app.post(
    '/delete',
    act(async (values) => {
      const name = values.name ?? '';
      await api.json('DELETE', snapshotPath(name));
      return `Deleted ${name}.`;
    }),
  );

  app.post('/upload', async (c) => {
    // The form is read whole into memory: one larger than a snapshot file may be is refused unread.
    const declared = Number(c.req.header('content-length'));
    if (!(declared <= MAX_SNAPSHOT_BYTES + FORM_OVERHEAD_BYTES)) {
      const unsized = Number.isNaN(declared);
      const unread =
        `The upload cannot be ` +
        `read: ${unsized ? 'it has no Content-Length' : `a snapshot file is at most ${MAX_SNAPSHOT_SIZE_IN_WORDS}`}.`;
      return page(c, { status: unsized ? 411 : 413, form: 'upload', state: { fieldErrors: { file: unread } } });
    }
    return act(
      async (values, context) => {
        // The form's file (formValues keeps its text fields; the body is parsed once).
        const { file } = await context.req.parseBody();
        if (!(file instanceof File) || file.size === 0)
          throw new DashboardApiError(400, 'Choose a snapshot file to upload.');
        const name = values.name || nameOfFile(file.name);
        await api.json('PUT', snapshotPath(name), { file });
        await api.json('POST', '/_localplane/restore', { body: { name } });
        return `Uploaded ${name} and restored it.`;
      },
      // A refused name at its field; the rest (a damaged file, none chosen) is about the file.
      { name: 'upload', refusedState: atField('file') },
    )(c);
  });

  app.post(
    '/tier',
    act(
      async (values) => {
        const workspaceId = values.workspace_id ?? '';
        const changed = await api.json<{ tier: string }>(
          'PUT',
          `/_localplane/workspaces/${encodeURIComponent(workspaceId)}/tier`,
          { body: { tier: values.tier ?? '' } },
        );
        const { workspaces } = await api.get<State>(
          `/_localplane/state?workspace_id=${encodeURIComponent(workspaceId)}`,
        );
        return `Workspace ${workspaces[0]?.name ?? workspaceId} is on the ${changed.tier} plan.`;
      },
      { name: 'tier', refusedState: atField('tier') },
    ),
  );

  app.post(
    '/limits',
    act(
      async (values) => {
        const { patch, changed } = limitsPatch(values, await api.get<Limits>('/_localplane/config'));
        if (changed.length === 0) return 'No limit changed.';
        await api.json('PATCH', '/_localplane/config', { body: patch });
        return `Changed ${changed.join(', ')}.`;
      },
      { name: 'limits', refusedState: (error, values) => refusedForm(error, values).state },
    ),
  );

  return app;
}
