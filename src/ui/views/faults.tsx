import { Hono, type Context } from 'hono';
import {
  VALIDATION_FAILURES,
  type ExportRunFaultRequest,
  type ValidationFaultRequest,
} from '../../bulk-exports/faults.ts';
import { REVISION_FAULT_STAGES, type RevisionFaultRequest } from '../../deployments/faults.ts';
import { MAX_SPAN_SECONDS } from '../../shared/time.ts';
import { MAX_LATENCY_MS, type FaultAction, type FaultRuleView } from '../../journal/fault-rules.ts';
import { MAX_GLOB_LENGTH } from '../../journal/glob.ts';
import { REQUEST_SOURCES, type RequestMatch } from '../../journal/matching.ts';
import type { NearMisses } from '../../journal/schemas.ts';
import { DashboardApiError, type DashboardApi } from '../api.ts';
import { readFixtures, type FixtureWorkspace } from '../fixtures.ts';
import {
  formValues,
  optionalNumber,
  optionalText,
  refusedForm,
  refusedStatus,
  type FormState,
  type FormValues,
} from '../forms.ts';
import { isFragmentRequest } from '../fragments.ts';
import { CountField, ErrorNote, Field, HtmxForm, Options, renderView, TableHead } from '../layout.tsx';

type Armed<Knob> = Knob & { remaining: number };

/** GET /_localplane/faults: the armed knobs, with the uses each has left. */
export interface ArmedKnobs {
  destination_validations: Armed<ValidationFaultRequest>[];
  export_runs: Armed<ExportRunFaultRequest>[];
  revisions: Armed<RevisionFaultRequest>[];
}

const FAULTS = '/ui/faults';
const RULE_ACTIONS = {
  status: 'Error reply',
  latency: 'Added latency',
  latency_uniform: 'Added latency, uniform between min and max',
  latency_normal: 'Added latency, normal around a mean',
  drop: 'Drop the connection',
  close: 'Empty reply',
} as const;
/** The near misses the view shows: those among the newest this many requests. */
const NEAR_MISS_WINDOW = 100;
const SHOWN_NEAR_MISSES = 20;

const workspaceName = (workspaces: FixtureWorkspace[], id: string) =>
  workspaces.find((workspace) => workspace.id === id)?.name ?? id;

function describeMatch(match: RequestMatch, workspaces: FixtureWorkspace[]): string {
  const parts = [
    match.source,
    match.method,
    match.path,
    match.workspace_id && `in ${workspaceName(workspaces, match.workspace_id)}`,
    match.header &&
      `with header ${match.header.name}${match.header.value === undefined ? '' : `: ${match.header.value}`}`,
  ].filter(Boolean);
  return parts.length === 0 ? 'every request' : parts.join(' ');
}

function describeAction(action: FaultAction): string {
  if (action.status !== undefined)
    return [
      `${action.status}`,
      action.code,
      action.detail && `“${action.detail}”`,
      action.headers &&
        `with ${Object.entries(action.headers)
          .map(([name, value]) => `${name}: ${value}`)
          .join(', ')}`,
      action.body !== undefined && `body ${JSON.stringify(action.body)}`,
    ]
      .filter(Boolean)
      .join(' ');
  if (action.latency_ms !== undefined) return `+${action.latency_ms} ms`;
  if (action.latency?.distribution === 'uniform') return `+${action.latency.min_ms}–${action.latency.max_ms} ms`;
  if (action.latency?.distribution === 'normal') return `+${action.latency.mean_ms} ± ${action.latency.stddev_ms} ms`;
  return action.drop_connection ? 'drop the connection' : 'empty reply';
}

/** A refusal of a field's text before the API sees it, worded and placed as the API's 422 items are. */
const fieldRefusal = (loc: string[], msg: string) =>
  new DashboardApiError(422, `${loc.join('.')}: ${msg}`, [{ loc: ['body', ...loc], msg }]);

/** The reply headers typed as `Name: value` lines (blank lines skipped); none given is undefined. */
function replyHeaders(text: string | undefined): Record<string, string> | undefined {
  const lines = (text ?? '').split(/\r?\n/).filter((line) => line.trim() !== '');
  if (lines.length === 0) return undefined;
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon === -1) throw fieldRefusal(['action', 'headers'], `“${line}” is no header: write Name: value`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** The reply body typed as JSON; none given is undefined. */
function replyBody(text: string | undefined): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw fieldRefusal(['action', 'body'], 'The body is not JSON: write a JSON value, a string in double quotes');
  }
}

/** The request POST /_localplane/fault-rules takes, from the form; what the API refuses it names. */
function faultRuleRequest(values: FormValues) {
  const headerGiven = values.match_header_name || values.match_header_value;
  const actions: Record<string, () => Record<string, unknown>> = {
    status: () => ({
      status: optionalNumber(values.status),
      detail: optionalText(values.detail),
      code: optionalText(values.code),
      headers: replyHeaders(values.headers),
      body: replyBody(values.body),
    }),
    latency: () => ({ latency_ms: optionalNumber(values.latency_ms) }),
    latency_uniform: () => ({
      latency: {
        distribution: 'uniform',
        min_ms: optionalNumber(values.latency_min_ms),
        max_ms: optionalNumber(values.latency_max_ms),
      },
    }),
    latency_normal: () => ({
      latency: {
        distribution: 'normal',
        mean_ms: optionalNumber(values.latency_mean_ms),
        stddev_ms: optionalNumber(values.latency_stddev_ms),
      },
    }),
    drop: () => ({ drop_connection: true }),
    close: () => ({ empty_reply: true }),
  };
  return {
    match: {
      source: optionalText(values.match_source),
      method: optionalText(values.match_method),
      path: optionalText(values.match_path),
      workspace_id: optionalText(values.match_workspace_id),
      header: headerGiven
        ? { name: optionalText(values.match_header_name), value: optionalText(values.match_header_value) }
        : undefined,
    },
    action: actions[values.action]?.() ?? {},
    probability: optionalNumber(values.probability),
    count: optionalNumber(values.count),
  };
}

function describeValidationKnob(
  { error, workspace_id, endpoint_url }: ValidationFaultRequest,
  workspaces: FixtureWorkspace[],
): string {
  return [
    `destination validations fail with ${error}`,
    workspace_id && `in ${workspaceName(workspaces, workspace_id)}`,
    endpoint_url && `for ${endpoint_url}`,
  ]
    .filter(Boolean)
    .join(' ');
}

function describeExportRunKnob(knob: ExportRunFaultRequest): string {
  if (knob.mode === 'slow') return `export runs wait ${knob.delay_seconds} s (emulator clock) before each file`;
  return (
    `export runs fail ${knob.attempts ? `their first ${knob.attempts} attempt(s)` : 'every attempt'}: ` +
    `“${knob.message}”`
  );
}

function describeRevisionKnob({ stage, deployment_id, message }: RevisionFaultRequest): string {
  return [
    stage === 'skip' ? 'revisions are skipped' : `revisions fail at ${stage}`,
    deployment_id && `of deployment ${deployment_id}`,
    message && `with “${message}”`,
  ]
    .filter(Boolean)
    .join(' ');
}

const WorkspaceOptions = ({ workspaces, selected }: { workspaces: FixtureWorkspace[]; selected?: string }) => (
  <>
    <option value="">any</option>
    {workspaces.map((workspace) => (
      <option value={workspace.id} selected={workspace.id === selected}>
        {workspace.name}
      </option>
    ))}
  </>
);

/** The form arming POST /_localplane/faults/export-runs, on this view and on the exports view. */
export function ExportRunKnobForm({
  action,
  replaces,
  state = {},
}: {
  action: string;
  replaces: string;
  state?: FormState;
}) {
  const values = state.values ?? {};
  return (
    <HtmxForm
      class="inline"
      action={action}
      replaces={replaces}
      aria-label="Fail or slow the next export runs"
      state={state}
      data-route="POST /_localplane/faults/export-runs"
    >
      <Field label="Mode">
        <select name="mode">
          <Options choices={['fail', 'slow']} selected={values.mode} />
        </select>
      </Field>
      <CountField label="Runs" name="count" value={values.count ?? '1'} />
      <CountField label="Failing attempts (fail; blank: all)" name="attempts" value={values.attempts} />
      <Field label="Message (fail)">
        <input name="message" value={values.message} placeholder="Injected failure: the export run failed" />
      </Field>
      <Field label="Delay seconds (slow)">
        <input
          name="delay_seconds"
          type="number"
          min={0.001}
          max={MAX_SPAN_SECONDS}
          step="any"
          size={6}
          value={values.delay_seconds ?? '60'}
        />
      </Field>
      <button type="submit">Arm</button>
      {state.error && <ErrorNote message={state.error} />}
    </HtmxForm>
  );
}

/** The request POST /_localplane/faults/export-runs takes, from ExportRunKnobForm. */
export function exportRunKnobRequest(values: FormValues) {
  const common = { mode: values.mode, count: optionalNumber(values.count) };
  return values.mode === 'slow'
    ? { ...common, delay_seconds: optionalNumber(values.delay_seconds) }
    : { ...common, attempts: optionalNumber(values.attempts), message: optionalText(values.message) };
}

/** The armed export-run knobs, as a list. */
export const ArmedExportRunKnobs = ({ knobs }: { knobs: Armed<ExportRunFaultRequest>[] }) =>
  knobs.length === 0 ? (
    <p class="muted">No export-run knob is armed: the next runs run as usual.</p>
  ) : (
    <ul>
      {knobs.map((knob) => (
        <li>
          {describeExportRunKnob(knob)} <span class="badge">{knob.remaining} left</span>
        </li>
      ))}
    </ul>
  );

interface RulesProps {
  rules: FaultRuleView[];
  nearMisses: NearMisses['near_misses'];
  workspaces: FixtureWorkspace[];
  error?: string;
  /** Sent beside another part, replacing the rules in place (htmx's out-of-band swap). */
  outOfBand?: boolean;
}

/** What a near miss's request missed of its rule's match: each field's wanted and got, or why a match did not act. */
const MissedFields = ({ missed }: { missed: NearMisses['near_misses'][number]['missed'] }) =>
  missed.length === 0 ? (
    <span class="muted">matched, but did not act (its probability, spent, or a rule before it acted)</span>
  ) : (
    <ul class="missed">
      {missed.map(({ field, wanted, got }) => (
        <li>
          <span class="mono">{field}</span>: wanted <code>{wanted}</code>, got{' '}
          {got === null ? <span class="muted">none</span> : <code>{got}</code>}
        </li>
      ))}
    </ul>
  );

/** The newest requests no rule acted on, each beside the rule closest to matching it, newest first. */
function NearMissList({ nearMisses }: { nearMisses: NearMisses['near_misses'] }) {
  const shown = nearMisses.slice(-SHOWN_NEAR_MISSES).reverse();
  return (
    <>
      <h3 id="near-misses-heading">Near misses</h3>
      <p class="muted">
        Requests among the newest {NEAR_MISS_WINDOW} that no rule acted on, each beside the rule closest to matching it
        and the fields it missed.
      </p>
      {shown.length === 0 ? (
        <p class="muted">No near miss: every recent request was faulted, or none came.</p>
      ) : (
        <table
          class="near-misses"
          aria-labelledby="near-misses-heading"
          data-route="GET /_localplane/fault-rules/near-misses"
        >
          <TableHead columns={['Request', 'Rule', 'Missed']} />
          <tbody>
            {shown.map(({ request, rule_id, missed }) => (
              <tr>
                <td>
                  <a href={`/ui/requests/${request.id}`}>
                    #{request.id} {request.method} <span class="mono">{request.path}</span>
                  </a>{' '}
                  <span class={`badge status-${String(request.status)[0]}`}>{request.status}</span>
                </td>
                <td>
                  <a href={`${FAULTS}#${rule_id}`} class="mono">
                    {rule_id}
                  </a>
                </td>
                <td>
                  <MissedFields missed={missed} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

/**
 * The rules with how often each was checked and fired, and the near misses; refreshed every second while there are
 * rules, to show them firing.
 */
function FaultRules({ rules, nearMisses, workspaces, error, outOfBand }: RulesProps) {
  const polling = rules.length > 0 ? { 'hx-get': FAULTS, 'hx-trigger': 'every 1s', 'hx-swap': 'outerHTML' } : {};
  return (
    <section
      id="fault-rules"
      aria-labelledby="fault-rules-heading"
      hx-swap-oob={outOfBand ? 'true' : undefined}
      {...polling}
    >
      <h2 id="fault-rules-heading" data-route="GET /_localplane/fault-rules">
        Fault rules
      </h2>
      {error && <ErrorNote message={error} />}
      {rules.length === 0 ? (
        <p class="muted">No fault rules: every request is served as usual.</p>
      ) : (
        <>
          <table class="fault-rules" aria-labelledby="fault-rules-heading">
            <TableHead
              columns={['Rule', 'Match', 'Action', 'Probability', 'Checked', 'Fired', 'Left', 'Delete']}
              numeric={['Probability', 'Checked', 'Fired', 'Left']}
            />
            <tbody>
              {rules.map((rule) => (
                <tr id={rule.id}>
                  <th scope="row" class="mono">
                    {rule.id}
                  </th>
                  <td>{describeMatch(rule.match, workspaces)}</td>
                  <td>{describeAction(rule.action)}</td>
                  <td class="num">{rule.probability}</td>
                  <td class="num" data-checked={rule.checked}>
                    {rule.checked}
                  </td>
                  <td class="num" data-fired={rule.fired}>
                    <a
                      href={`/ui/requests?fault_rule=${encodeURIComponent(rule.id)}`}
                      aria-label={`${rule.fired}: the requests ${rule.id} fired on`}
                    >
                      {rule.fired}
                    </a>
                  </td>
                  <td class="num">{rule.remaining ?? 'no end'}</td>
                  <td>
                    <HtmxForm
                      action={`${FAULTS}/rules/${encodeURIComponent(rule.id)}/delete`}
                      replaces="#fault-rules"
                      data-route="DELETE /_localplane/fault-rules/:rule_id"
                    >
                      {/* An id keeps the focus on the button across the refreshes. */}
                      <button type="submit" class="danger" id={`delete-${rule.id}`} aria-label={`Delete ${rule.id}`}>
                        Delete
                      </button>
                    </HtmxForm>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <HtmxForm
            action={`${FAULTS}/rules/delete`}
            replaces="#fault-rules"
            data-route="DELETE /_localplane/fault-rules"
          >
            <button type="submit" class="danger" id="delete-all-fault-rules">
              Delete all rules
            </button>
          </HtmxForm>
          <NearMissList nearMisses={nearMisses} />
        </>
      )}
    </section>
  );
}

function FaultRuleForm({ workspaces, state = {} }: { workspaces: FixtureWorkspace[]; state?: FormState }) {
  const values = state.values ?? {};
  const latency = { type: 'number', min: 0, max: MAX_LATENCY_MS, step: 'any', size: 6 } as const;
  return (
    <section id="fault-rule-form" aria-labelledby="fault-rule-form-heading">
      <h2 id="fault-rule-form-heading">Add a fault rule</h2>
      <HtmxForm
        action={`${FAULTS}/rules`}
        replaces="#fault-rule-form"
        aria-labelledby="fault-rule-form-heading"
        state={state}
        data-route="POST /_localplane/fault-rules"
      >
        <fieldset class="inline">
          <legend>Match (every field given must hold)</legend>
          <Field label="Source">
            <select name="match_source">
              <Options choices={REQUEST_SOURCES} selected={values.match_source} any="any" />
            </select>
          </Field>
          <Field label="Method">
            <input name="match_method" size={7} maxlength={32} value={values.match_method} placeholder="any" />
          </Field>
          <Field label="Path glob">
            <input
              name="match_path"
              maxlength={MAX_GLOB_LENGTH}
              pattern="(/|\*).*"
              title="A path glob starts with / (or a wildcard)"
              value={values.match_path}
              placeholder="/api/v1/bulk-exports*"
            />
          </Field>
          <Field label="Workspace">
            <select name="match_workspace_id">
              <WorkspaceOptions workspaces={workspaces} selected={values.match_workspace_id} />
            </select>
          </Field>
          <Field label="Header name">
            <input name="match_header_name" size={12} value={values.match_header_name} />
          </Field>
          <Field label="Header value (blank: any)">
            <input name="match_header_value" size={12} value={values.match_header_value} />
          </Field>
        </fieldset>
        <fieldset class="inline">
          <legend>Action</legend>
          <Field label="Do">
            <select name="action">
              {Object.entries(RULE_ACTIONS).map(([value, label]) => (
                <option value={value} selected={value === values.action}>
                  {label}
                </option>
              ))}
            </select>
          </Field>
          <Field label="Status (error)">
            <input
              name="status"
              type="number"
              inputmode="numeric"
              min={400}
              max={599}
              step={1}
              size={4}
              value={values.status ?? '503'}
            />
          </Field>
          <Field label="Detail (error)">
            <input name="detail" maxlength={1000} value={values.detail} />
          </Field>
          <Field label="S3 code (error, objstore)">
            <input
              name="code"
              size={12}
              pattern="[A-Za-z]{1,64}"
              title="Letters only, as S3's codes"
              value={values.code}
            />
          </Field>
          <Field label="Reply headers (error; Name: value lines)">
            <textarea name="headers" rows={2} cols={28} spellcheck={false} placeholder="Retry-After: 30">
              {values.headers}
            </textarea>
          </Field>
          <Field label="Reply body (error, API; JSON)">
            <textarea name="body" rows={2} cols={28} spellcheck={false} placeholder='{"detail": "try later"}'>
              {values.body}
            </textarea>
          </Field>
          <Field label="Latency ms">
            <input name="latency_ms" {...latency} value={values.latency_ms} />
          </Field>
          <Field label="Min ms (uniform)">
            <input name="latency_min_ms" {...latency} value={values.latency_min_ms} />
          </Field>
          <Field label="Max ms (uniform)">
            <input name="latency_max_ms" {...latency} value={values.latency_max_ms} />
          </Field>
          <Field label="Mean ms (normal)">
            <input name="latency_mean_ms" {...latency} value={values.latency_mean_ms} />
          </Field>
          <Field label="Std dev ms (normal)">
            <input name="latency_stddev_ms" {...latency} value={values.latency_stddev_ms} />
          </Field>
        </fieldset>
        <div class="inline">
          <Field label="Probability">
            <input
              name="probability"
              type="number"
              min={0}
              max={1}
              step="any"
              size={4}
              value={values.probability ?? '1'}
            />
          </Field>
          <CountField label="Times (blank: no end)" name="count" value={values.count} />
          <button type="submit" class="primary">
            Add rule
          </button>
        </div>
        {state.error && <ErrorNote message={state.error} />}
      </HtmxForm>
    </section>
  );
}

type KnobForm = 'validation' | 'exportRuns' | 'revisions';

interface KnobsProps {
  knobs: ArmedKnobs;
  workspaces: FixtureWorkspace[];
  forms?: Partial<Record<KnobForm | 'disarm', FormState>>;
}

function Knobs({ knobs, workspaces, forms = {} }: KnobsProps) {
  const validation = forms.validation?.values ?? {};
  const revision = forms.revisions?.values ?? {};
  const armed = [
    ...knobs.destination_validations.map((knob) => ({
      text: describeValidationKnob(knob, workspaces),
      remaining: knob.remaining,
    })),
    ...knobs.export_runs.map((knob) => ({ text: describeExportRunKnob(knob), remaining: knob.remaining })),
    ...knobs.revisions.map((knob) => ({ text: describeRevisionKnob(knob), remaining: knob.remaining })),
  ];
  const deployments = workspaces.flatMap((workspace) =>
    workspace.deployments.map((deployment) => ({ ...deployment, workspace: workspace.name })),
  );
  return (
    <section id="knobs" aria-labelledby="knobs-heading" data-route="GET /_localplane/faults">
      <h2 id="knobs-heading">Knobs</h2>
      <p class="muted">Each armed knob acts on the next matching events, as many times as it has left.</p>
      {armed.length === 0 ? (
        <p class="muted">No knob is armed.</p>
      ) : (
        <>
          <table aria-labelledby="knobs-heading">
            <TableHead columns={['Armed knob', 'Left']} numeric={['Left']} />
            <tbody>
              {armed.map((knob) => (
                <tr>
                  <td>{knob.text}</td>
                  <td class="num">{knob.remaining}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <HtmxForm action={`${FAULTS}/knobs/delete`} replaces="#knobs" data-route="DELETE /_localplane/faults">
            <button type="submit" class="danger" id="disarm-all-knobs">
              Disarm all knobs
            </button>
          </HtmxForm>
        </>
      )}
      {forms.disarm?.error && <ErrorNote message={forms.disarm.error} />}

      <h3>Destination validations</h3>
      <HtmxForm
        class="inline"
        action={`${FAULTS}/knobs/destination-validations`}
        data-route="POST /_localplane/faults/destination-validations"
        replaces="#knobs"
        aria-label="Fail the next destination validations"
        state={forms.validation}
      >
        <Field label="Failure">
          <select name="error">
            <Options choices={VALIDATION_FAILURES} selected={validation.error} />
          </select>
        </Field>
        <CountField label="Validations" name="count" value={validation.count ?? '1'} />
        <Field label="Workspace">
          <select name="workspace_id">
            <WorkspaceOptions workspaces={workspaces} selected={validation.workspace_id} />
          </select>
        </Field>
        <Field label="Endpoint URL (blank: any)">
          <input name="endpoint_url" value={validation.endpoint_url} />
        </Field>
        <button type="submit">Arm</button>
        {forms.validation?.error && <ErrorNote message={forms.validation.error} />}
      </HtmxForm>

      <h3>Export runs</h3>
      <ExportRunKnobForm action={`${FAULTS}/knobs/export-runs`} replaces="#knobs" state={forms.exportRuns} />

      <h3>Revisions</h3>
      <HtmxForm
        class="inline"
        action={`${FAULTS}/knobs/revisions`}
        data-route="POST /_localplane/faults/revisions"
        replaces="#knobs"
        aria-label="Fail or skip the next revisions"
        state={forms.revisions}
      >
        <Field label="Stage">
          <select name="stage">
            <Options choices={REVISION_FAULT_STAGES} selected={revision.stage} />
          </select>
        </Field>
        <CountField label="Revisions" name="count" value={revision.count ?? '1'} />
        <Field label="Deployment id (blank: any)">
          <input name="deployment_id" list="knob-deployments" size={38} value={revision.deployment_id} />
        </Field>
        <datalist id="knob-deployments">
          {deployments.map((deployment) => (
            <option value={deployment.id}>{`${deployment.name} (${deployment.workspace})`}</option>
          ))}
        </datalist>
        <Field label="Message (blank: the stage's own)">
          <input name="message" maxlength={2000} value={revision.message} />
        </Field>
        <button type="submit">Arm</button>
        {forms.revisions?.error && <ErrorNote message={forms.revisions.error} />}
      </HtmxForm>
    </section>
  );
}

interface PageState {
  rulesError?: string;
  ruleForm?: FormState;
  knobForms?: KnobsProps['forms'];
  /** The part an htmx request gets: the rules (default), the rule form (with the rules beside it) or the knobs. */
  part?: 'rules' | 'rule-form' | 'knobs';
  status?: number;
}

/** /ui/faults: the fault rules with how often each fired, a form adding one, and the knobs with forms arming them. */
export function faultsView(api: DashboardApi) {
  const app = new Hono();

  /** The near misses among the newest NEAR_MISS_WINDOW requests (none while there are no rules). */
  async function recentNearMisses(): Promise<NearMisses['near_misses']> {
    const { requests } = await api.get<{ requests: { id: number }[] }>('/_localplane/requests?order=desc&limit=1');
    const since = Math.max(0, (requests[0]?.id ?? 0) - NEAR_MISS_WINDOW);
    const { near_misses } = await api.get<NearMisses>(
      `/_localplane/fault-rules/near-misses?since=${since}&limit=${NEAR_MISS_WINDOW}`,
    );
    return near_misses;
  }

  async function page(c: Context, { rulesError, ruleForm, knobForms, part = 'rules', status = 200 }: PageState) {
    const [{ rules }, knobs, { workspaces }, nearMisses] = await Promise.all([
      api.get<{ rules: FaultRuleView[] }>('/_localplane/fault-rules'),
      api.get<ArmedKnobs>('/_localplane/faults'),
      readFixtures(api),
      recentNearMisses(),
    ]);
    const rulesProps = { rules, nearMisses, workspaces };
    const fragments = {
      rules: <FaultRules {...rulesProps} error={rulesError} />,
      'rule-form': (
        <>
          <FaultRuleForm workspaces={workspaces} state={ruleForm} />
          <FaultRules {...rulesProps} outOfBand />
        </>
      ),
      knobs: <Knobs knobs={knobs} workspaces={workspaces} forms={knobForms} />,
    };
    c.status(refusedStatus(c, status) as 200);
    return renderView(c, {
      title: 'Faults',
      active: 'faults',
      fragment: fragments[part],
      children: (
        <>
          <p class="muted">
            Fault rules act on API and objstore requests (not on <code>/_localplane</code> or the dashboard); the knobs
            act on what runs inside: destination validations, export runs, revisions. Rules and knobs last until they
            are used up, deleted, or the instance is reset.
          </p>
          <FaultRules {...rulesProps} error={rulesError} />
          <FaultRuleForm workspaces={workspaces} state={ruleForm} />
          <Knobs knobs={knobs} workspaces={workspaces} forms={knobForms} />
        </>
      ),
    });
  }

  /** Does what the form asks of the API; then htmx gets the updated part, a plain form post the page again (303). */
  async function act(
    c: Context,
    call: (values: FormValues) => Promise<unknown>,
    refused: (state: FormState) => PageState,
  ) {
    const values = await formValues(c);
    try {
      await call(values);
    } catch (error) {
      const { status, state } = refusedForm(error, values);
      return page(c, { ...refused(state), status });
    }
    if (!isFragmentRequest(c)) return c.redirect(FAULTS, 303);
    return page(c, refused({}));
  }

  app.get('/', (c) => page(c, {}));

  app.post('/rules', (c) =>
    act(
      c,
      (values) => api.json('POST', '/_localplane/fault-rules', { body: faultRuleRequest(values) }),
      (state) => ({ ruleForm: state, part: 'rule-form' }),
    ),
  );
  app.post('/rules/delete', (c) =>
    act(
      c,
      () => api.json('DELETE', '/_localplane/fault-rules'),
      (state) => ({ rulesError: state.error }),
    ),
  );
  app.post('/rules/:rule_id/delete', (c) =>
    act(
      c,
      () => api.json('DELETE', `/_localplane/fault-rules/${encodeURIComponent(c.req.param('rule_id'))}`),
      (state) => ({ rulesError: state.error }),
    ),
  );

  app.post('/knobs/delete', (c) =>
    act(
      c,
      () => api.json('DELETE', '/_localplane/faults'),
      (state) => ({ knobForms: { disarm: state }, part: 'knobs' }),
    ),
  );
  app.post('/knobs/destination-validations', (c) =>
    act(
      c,
      (values) =>
        api.json('POST', '/_localplane/faults/destination-validations', {
          body: {
            error: values.error,
            count: optionalNumber(values.count),
            workspace_id: optionalText(values.workspace_id),
            endpoint_url: optionalText(values.endpoint_url),
          },
        }),
      (state) => ({ knobForms: { validation: state }, part: 'knobs' }),
    ),
  );
  app.post('/knobs/export-runs', (c) =>
    act(
      c,
      (values) => api.json('POST', '/_localplane/faults/export-runs', { body: exportRunKnobRequest(values) }),
      (state) => ({ knobForms: { exportRuns: state }, part: 'knobs' }),
    ),
  );
  app.post('/knobs/revisions', (c) =>
    act(
      c,
      (values) =>
        api.json('POST', '/_localplane/faults/revisions', {
          body: {
            stage: values.stage,
            count: optionalNumber(values.count),
            deployment_id: optionalText(values.deployment_id),
            message: optionalText(values.message),
          },
        }),
      (state) => ({ knobForms: { revisions: state }, part: 'knobs' }),
    ),
  );

  return app;
}
