import { Hono, type Context } from 'hono';
import {
  VALIDATION_FAILURES,
  type ExportRunFaultRequest,
  type ValidationFaultRequest,
} from '../../bulk-exports/faults.ts';
import { REVISION_FAULT_STAGES, type RevisionFaultRequest } from '../../deployments/faults.ts';
import type { FaultAction, FaultRuleView } from '../../journal/fault-rules.ts';
import { REQUEST_SOURCES, type RequestMatch } from '../../journal/matching.ts';
import type { DashboardApi } from '../api.ts';
import { readFixtures, type FixtureWorkspace } from '../fixtures.ts';
import {
  formValues,
  optionalNumber,
  optionalText,
  refusal,
  refusedStatus,
  type FormState,
  type FormValues,
} from '../forms.ts';
import { ErrorNote, HtmxForm, isFragmentRequest, Options, renderView, TableHead } from '../layout.tsx';

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
  drop: 'Drop the connection',
  close: 'Empty reply',
} as const;

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
    return [`${action.status}`, action.code, action.detail && `“${action.detail}”`].filter(Boolean).join(' ');
  if (action.latency_ms !== undefined) return `+${action.latency_ms} ms`;
  if (action.latency?.distribution === 'uniform') return `+${action.latency.min_ms}–${action.latency.max_ms} ms`;
  if (action.latency?.distribution === 'normal') return `+${action.latency.mean_ms} ± ${action.latency.stddev_ms} ms`;
  return action.drop_connection ? 'drop the connection' : 'empty reply';
}

/** The request POST /_localplane/fault-rules takes, from the form; what the API refuses it names. */
function faultRuleRequest(values: FormValues) {
  const headerGiven = values.match_header_name || values.match_header_value;
  const actions: Record<string, () => Record<string, unknown>> = {
    status: () => ({
      status: optionalNumber(values.status),
      detail: optionalText(values.detail),
      code: optionalText(values.code),
    }),
    latency: () => ({ latency_ms: optionalNumber(values.latency_ms) }),
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
    <HtmxForm class="inline" action={action} replaces={replaces} aria-label="Fail or slow the next export runs">
      <label>
        Mode
        <select name="mode">
          <Options choices={['fail', 'slow']} selected={values.mode} />
        </select>
      </label>
      <label>
        Runs
        <input name="count" type="number" inputmode="numeric" size={4} value={values.count ?? '1'} />
      </label>
      <label>
        Failing attempts (fail; blank: all)
        <input name="attempts" type="number" inputmode="numeric" size={4} value={values.attempts} />
      </label>
      <label>
        Message (fail)
        <input name="message" value={values.message} placeholder="Injected failure: the export run failed" />
      </label>
      <label>
        Delay seconds (slow)
        <input name="delay_seconds" type="number" step="any" size={6} value={values.delay_seconds ?? '60'} />
      </label>
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
  workspaces: FixtureWorkspace[];
  error?: string;
  /** Sent beside another part, replacing the rules in place (htmx's out-of-band swap). */
  outOfBand?: boolean;
}

/** The rules with how often each fired; refreshed every second while there are rules, to show them firing. */
function FaultRules({ rules, workspaces, error, outOfBand }: RulesProps) {
  const polling = rules.length > 0 ? { 'hx-get': FAULTS, 'hx-trigger': 'every 1s', 'hx-swap': 'outerHTML' } : {};
  return (
    <section
      id="fault-rules"
      aria-labelledby="fault-rules-heading"
      hx-swap-oob={outOfBand ? 'true' : undefined}
      {...polling}
    >
      <h2 id="fault-rules-heading">Fault rules</h2>
      {error && <ErrorNote message={error} />}
      {rules.length === 0 ? (
        <p class="muted">No fault rules: every request is served as usual.</p>
      ) : (
        <>
          <table aria-labelledby="fault-rules-heading">
            <TableHead
              columns={['Rule', 'Match', 'Action', 'Probability', 'Fired', 'Left', 'Delete']}
              numeric={['Probability', 'Fired', 'Left']}
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
                    <HtmxForm action={`${FAULTS}/rules/${encodeURIComponent(rule.id)}/delete`} replaces="#fault-rules">
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
          <HtmxForm action={`${FAULTS}/rules/delete`} replaces="#fault-rules">
            <button type="submit" class="danger" id="delete-all-fault-rules">
              Delete all rules
            </button>
          </HtmxForm>
        </>
      )}
    </section>
  );
}

function FaultRuleForm({ workspaces, state = {} }: { workspaces: FixtureWorkspace[]; state?: FormState }) {
  const values = state.values ?? {};
  return (
    <section id="fault-rule-form" aria-labelledby="fault-rule-form-heading">
      <h2 id="fault-rule-form-heading">Add a fault rule</h2>
      <HtmxForm action={`${FAULTS}/rules`} replaces="#fault-rule-form" aria-labelledby="fault-rule-form-heading">
        <fieldset class="inline">
          <legend>Match (every field given must hold)</legend>
          <label>
            Source
            <select name="match_source">
              <Options choices={REQUEST_SOURCES} selected={values.match_source} any="any" />
            </select>
          </label>
          <label>
            Method
            <input name="match_method" size={7} value={values.match_method} placeholder="any" />
          </label>
          <label>
            Path glob
            <input name="match_path" value={values.match_path} placeholder="/api/v1/bulk-exports*" />
          </label>
          <label>
            Workspace
            <select name="match_workspace_id">
              <WorkspaceOptions workspaces={workspaces} selected={values.match_workspace_id} />
            </select>
          </label>
          <label>
            Header name
            <input name="match_header_name" size={12} value={values.match_header_name} />
          </label>
          <label>
            Header value (blank: any)
            <input name="match_header_value" size={12} value={values.match_header_value} />
          </label>
        </fieldset>
        <fieldset class="inline">
          <legend>Action</legend>
          <label>
            Do
            <select name="action">
              {Object.entries(RULE_ACTIONS).map(([value, label]) => (
                <option value={value} selected={value === values.action}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          <label>
            Status (error)
            <input name="status" type="number" inputmode="numeric" size={4} value={values.status ?? '503'} />
          </label>
          <label>
            Detail (error)
            <input name="detail" value={values.detail} />
          </label>
          <label>
            S3 code (error, objstore)
            <input name="code" size={12} value={values.code} />
          </label>
          <label>
            Latency ms
            <input name="latency_ms" type="number" step="any" size={6} value={values.latency_ms} />
          </label>
        </fieldset>
        <div class="inline">
          <label>
            Probability
            <input name="probability" type="number" step="any" size={4} value={values.probability ?? '1'} />
          </label>
          <label>
            Times (blank: no end)
            <input name="count" type="number" inputmode="numeric" size={4} value={values.count} />
          </label>
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
    <section id="knobs" aria-labelledby="knobs-heading">
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
          <HtmxForm action={`${FAULTS}/knobs/delete`} replaces="#knobs">
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
        replaces="#knobs"
        aria-label="Fail the next destination validations"
      >
        <label>
          Failure
          <select name="error">
            <Options choices={VALIDATION_FAILURES} selected={validation.error} />
          </select>
        </label>
        <label>
          Validations
          <input name="count" type="number" inputmode="numeric" size={4} value={validation.count ?? '1'} />
        </label>
        <label>
          Workspace
          <select name="workspace_id">
            <WorkspaceOptions workspaces={workspaces} selected={validation.workspace_id} />
          </select>
        </label>
        <label>
          Endpoint URL (blank: any)
          <input name="endpoint_url" value={validation.endpoint_url} />
        </label>
        <button type="submit">Arm</button>
        {forms.validation?.error && <ErrorNote message={forms.validation.error} />}
      </HtmxForm>

      <h3>Export runs</h3>
      <ExportRunKnobForm action={`${FAULTS}/knobs/export-runs`} replaces="#knobs" state={forms.exportRuns} />

      <h3>Revisions</h3>
      <HtmxForm
        class="inline"
        action={`${FAULTS}/knobs/revisions`}
        replaces="#knobs"
        aria-label="Fail or skip the next revisions"
      >
        <label>
          Stage
          <select name="stage">
            <Options choices={REVISION_FAULT_STAGES} selected={revision.stage} />
          </select>
        </label>
        <label>
          Revisions
          <input name="count" type="number" inputmode="numeric" size={4} value={revision.count ?? '1'} />
        </label>
        <label>
          Deployment id (blank: any)
          <input name="deployment_id" list="knob-deployments" size={38} value={revision.deployment_id} />
        </label>
        <datalist id="knob-deployments">
          {deployments.map((deployment) => (
            <option value={deployment.id}>{`${deployment.name} (${deployment.workspace})`}</option>
          ))}
        </datalist>
        <label>
          Message (blank: the stage's own)
          <input name="message" value={revision.message} />
        </label>
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

  async function page(c: Context, { rulesError, ruleForm, knobForms, part = 'rules', status = 200 }: PageState) {
    const [{ rules }, knobs, { workspaces }] = await Promise.all([
      api.get<{ rules: FaultRuleView[] }>('/_localplane/fault-rules'),
      api.get<ArmedKnobs>('/_localplane/faults'),
      readFixtures(api),
    ]);
    const fragments = {
      rules: <FaultRules rules={rules} workspaces={workspaces} error={rulesError} />,
      'rule-form': (
        <>
          <FaultRuleForm workspaces={workspaces} state={ruleForm} />
          <FaultRules rules={rules} workspaces={workspaces} outOfBand />
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
          <FaultRules rules={rules} workspaces={workspaces} error={rulesError} />
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
      const { status, detail } = refusal(error);
      return page(c, { ...refused({ values, error: detail }), status });
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
