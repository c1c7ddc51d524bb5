import { Hono, type Context } from 'hono';
import { DashboardApiError, type DashboardApi } from '../api.ts';
import type { ClockRun, ClockState, ListedTask, Task } from '../../admin/schemas.ts';
import { describeTask, DueWork, namesFor, TaskResource, type Names } from '../due-work.tsx';
import { formValues, refusedAt, type FormState, type FormValues } from '../forms.ts';
import { isFragmentRequest } from '../fragments.ts';
import type { Child } from 'hono/jsx';
import { ErrorNote, Field, HtmxForm, renderView } from '../layout.tsx';
import { Timestamp } from '../time.tsx';
import { parseSpan, SPAN_HINT } from '../spans.ts';

const CLOCK_STATE = '#clock-state';

/**
 * The part that changes: the time, frozen or running, the error of the last action; the due work comes with it, swapped
 * out of band.
 */
function ClockStatePanel({
  clock,
  error,
  ran,
  names,
}: {
  clock: ClockState;
  error?: string;
  ran?: RanWork;
  names: Names;
}) {
  const action = clock.frozen ? 'unfreeze' : 'freeze';
  // While the clock runs, the time and the due work follow it.
  const polling = clock.frozen
    ? {}
    : { 'hx-get': '/ui/clock', 'hx-trigger': 'every 2s', 'hx-target': CLOCK_STATE, 'hx-swap': 'outerHTML' };
  return (
    <section
      id="clock-state"
      class="card clock-state"
      aria-label="Emulator clock"
      data-route="GET /_localplane/clock, GET /_localplane/tasks"
      {...polling}
    >
      {error && <ErrorNote message={error} />}
      {ran && <RanTasks ran={ran} names={names} />}
      <div class="muted">Now, on the emulator clock</div>
      <div class="figure mono">
        <Timestamp at={clock.now} precise />
      </div>
      {/* One toggle for both: it offers whichever the clock's state allows. */}
      <ClockForm action={action} route="POST /_localplane/clock/freeze, POST /_localplane/clock/unfreeze">
        <span class={`badge clock-${clock.frozen ? 'frozen' : 'running'}`}>{clock.frozen ? 'frozen' : 'running'}</span>
        <button type="submit">{clock.frozen ? 'Unfreeze' : 'Freeze'}</button>
      </ClockForm>
    </section>
  );
}

/** What a run of due work did: its action's words and the tasks that ran, in order. */
interface RanWork {
  action: string;
  tasks: readonly Task[];
}

/** The tasks a run of due work ran, each with what it did, the resource it acted on and when it was due. */
function RanTasks({ ran, names }: { ran: RanWork; names: Names }) {
  return (
    <div class="notice ran-tasks" role="status">
      <p>
        {ran.action}: {ran.tasks.length === 0 ? 'no task was due.' : `${ran.tasks.length} ran.`}
      </p>
      {ran.tasks.length > 0 && (
        <ol aria-label="The tasks that ran, in order">
          {ran.tasks.map((task) => (
            <li data-kind={task.kind}>
              {describeTask(task)} · <TaskResource task={task} names={names} /> · <Timestamp at={task.due_at} />
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

function DueWorkPanel({
  tasks,
  names,
  now,
  outOfBand = false,
}: {
  tasks: readonly ListedTask[];
  names: Names;
  now: string;
  outOfBand?: boolean;
}) {
  return (
    <section id="due-work" aria-labelledby="due-work-title" {...(outOfBand ? { 'hx-swap-oob': 'true' } : {})}>
      <h2 id="due-work-title">Due work</h2>
      <DueWork
        tasks={tasks}
        names={names}
        now={now}
        caption="The tasks running on the emulator clock, longest running first, then those scheduled, soonest first"
      />
    </section>
  );
}

/** The forms with a field to type in: an answer to one of them brings it back out of band, with its refusal. */
type TypedForm = 'advance' | 'set' | 'idle';

/** A typed form's state and whether it comes out of band (in the answer to its post). */
interface TypedFormProps {
  state?: FormState;
  outOfBand?: boolean;
}

/**
 * A form of the clock's: it posts to `/ui/clock/<action>`, which calls the API's `/_localplane/clock/<action>` (or
 * `route`, when it offers more than one), and its answer takes the clock panel's place.
 */
function ClockForm({
  id,
  action,
  route = `POST /_localplane/clock/${action}`,
  state,
  outOfBand = false,
  children,
}: TypedFormProps & { id?: string; action: string; route?: string; children: Child }) {
  return (
    <HtmxForm
      id={id}
      class="inline"
      action={`/ui/clock/${action}`}
      replaces={CLOCK_STATE}
      data-route={route}
      state={state}
      {...(outOfBand ? { 'hx-swap-oob': 'true' } : {})}
    >
      {children}
    </HtmxForm>
  );
}

/**
 * Set to a time, from now as the clock last read: an action's answer brings it up to date (out of band), a poll leaves
 * what is typed alone; a refused time stays as typed.
 */
function SetTimeForm({ now, state, outOfBand }: TypedFormProps & { now: string }) {
  return (
    <ClockForm id="clock-set" action="set" state={state} outOfBand={outOfBand}>
      <Field label="Set to (ISO 8601)">
        <input
          name="time"
          required
          value={state?.fieldErrors ? state.values?.time : now}
          class="mono"
          size={34}
          autocomplete="off"
        />
      </Field>
      <button type="submit">Set</button>
      <span class="muted">Forward runs what falls due on the way; backward runs nothing.</span>
    </ClockForm>
  );
}

function AdvanceForm({ state, outOfBand }: TypedFormProps) {
  return (
    <ClockForm id="clock-advance" action="advance" state={state} outOfBand={outOfBand}>
      <Field label="Advance by">
        <input
          name="span"
          required
          value={state?.values?.span}
          placeholder="90s, 2h, 1d 3h"
          aria-describedby="span-hint"
          autocomplete="off"
        />
      </Field>
      <button type="submit" class="primary">
        Advance
      </button>
      <span id="span-hint" class="muted">
        {SPAN_HINT}; 0 runs what is due now. What falls due on the way runs at its own time.
      </span>
    </ClockForm>
  );
}

function RunUntilIdleForm({ state, outOfBand }: TypedFormProps) {
  return (
    <ClockForm id="clock-idle" action="run-until-idle" state={state} outOfBand={outOfBand}>
      <Field label="Within">
        <input
          name="within"
          value={state?.values?.within}
          placeholder="1d"
          size={8}
          aria-describedby="idle-hint"
          autocomplete="off"
        />
      </Field>
      <button type="submit">Run until idle</button>
      <span id="idle-hint" class="muted">
        From task to task until none is due within that span of now (default a day).
      </span>
    </ClockForm>
  );
}

function MoveControls({ now, forms }: { now: string; forms: Partial<Record<TypedForm, FormState>> }) {
  return (
    <section aria-labelledby="move-title">
      <h2 id="move-title">Move the clock</h2>
      <ClockForm action="advance">
        <button type="submit" name="span" value="1m">
          +1 minute
        </button>
        <button type="submit" name="span" value="1h">
          +1 hour
        </button>
        <button type="submit" name="span" value="1d">
          +1 day
        </button>
      </ClockForm>
      <AdvanceForm state={forms.advance} />
      <SetTimeForm now={now} state={forms.set} />
      <ClockForm action="advance-to-next">
        <button type="submit">Advance to the next task</button>
        <span class="muted">Moves to the soonest task's due time and runs what is due then.</span>
      </ClockForm>
      <RunUntilIdleForm state={forms.idle} />
    </section>
  );
}

/** What an action came to: a refusal of no field (its status and words), or a typed form posted and its state. */
interface Outcome {
  status?: number;
  error?: string;
  form?: TypedForm;
  state?: FormState;
}

/** A typed form's post: its one field (where a refusal shows) and values; `kept` when a success brings it back too. */
interface TypedFormPost {
  form: TypedForm;
  field: string;
  values: FormValues;
  kept?: boolean;
}

/** /ui/clock: the emulator clock, frozen or running, moved by a span or to a time, and the work due on it. */
export function clockView(api: DashboardApi) {
  const app = new Hono();

  /**
   * The view after an action (or none): a refusal of no field in the clock's panel, with its status; a typed form
   * posted comes back out of band, as typed, with its refusal at its field.
   */
  const render = async (c: Context, outcome: Outcome = {}, ran?: RanWork) => {
    const [clock, tasks] = await Promise.all([
      api.get<ClockState>('/_localplane/clock'),
      api.get<ListedTask[]>('/_localplane/tasks'),
    ]);
    const names = await namesFor(api, [...tasks, ...(ran?.tasks ?? [])]);
    // htmx swaps only success answers: to htmx, a refusal comes back in the fragment as a 200.
    if (outcome.status && !isFragmentRequest(c)) c.status(outcome.status as 400);
    const { error, form } = outcome;
    const forms = form ? { [form]: outcome.state } : {};
    return renderView(c, {
      title: 'Clock',
      active: 'clock',
      children: (
        <>
          <div class="clock-top">
            <ClockStatePanel clock={clock} error={error} ran={ran} names={names} />
            <MoveControls now={clock.now} forms={forms} />
          </div>
          <DueWorkPanel tasks={tasks} names={names} now={clock.now} />
        </>
      ),
      fragment: (
        <>
          <ClockStatePanel clock={clock} error={error} ran={ran} names={names} />
          <DueWorkPanel tasks={tasks} names={names} now={clock.now} outOfBand />
          {c.req.method === 'POST' && <SetTimeForm now={clock.now} state={forms.set} outOfBand />}
          {form === 'advance' && <AdvanceForm state={forms.advance} outOfBand />}
          {form === 'idle' && <RunUntilIdleForm state={forms.idle} outOfBand />}
        </>
      ),
    });
  };

  /**
   * Runs an API call for an action; its refusal is shown, not thrown: at the field of the typed form posted, if any;
   * a run of due work shows the tasks it ran.
   */
  const act = async (c: Context, call: () => Promise<unknown>, action?: string, typed?: TypedFormPost) => {
    try {
      const answer = await call();
      const ran = action ? { action, tasks: (answer as ClockRun).ran } : undefined;
      return render(c, typed?.kept ? { form: typed.form, state: { values: typed.values } } : {}, ran);
    } catch (error) {
      if (!(error instanceof DashboardApiError)) throw error;
      if (error.status < 500 && typed) return refused(c, typed, error);
      return render(c, { status: error.status >= 500 ? 502 : error.status, error: error.detail });
    }
  };

  /** A typed form's refusal, at its one field. */
  const refused = (c: Context, { form, field, values }: TypedFormPost, error: DashboardApiError) => {
    const { status, state } = refusedAt(field, error, values);
    return render(c, { status, form, state });
  };

  app.get('/', (c) => render(c));
  app.post('/freeze', (c) => act(c, () => api.json('POST', '/_localplane/clock/freeze')));
  app.post('/unfreeze', (c) => act(c, () => api.json('POST', '/_localplane/clock/unfreeze')));
  app.post('/advance', async (c) => {
    const values = await formValues(c);
    // The typed span's form comes back as typed; the quick buttons' (no id for htmx to name) leaves it alone.
    const typed = {
      form: 'advance',
      field: 'span',
      values,
      kept: c.req.header('hx-trigger') === 'clock-advance',
    } as const;
    const span = parseSpan(values.span ?? '');
    if ('error' in span) return refused(c, typed, new DashboardApiError(422, span.error));
    return act(
      c,
      () => api.json('POST', '/_localplane/clock/advance', { body: { seconds: span.seconds } }),
      undefined,
      typed,
    );
  });
  app.post('/set', async (c) => {
    const values = await formValues(c);
    const time = values.time ?? '';
    const typed = { form: 'set', field: 'time', values } as const;
    return act(c, () => api.json('POST', '/_localplane/clock/set', { body: { time } }), undefined, typed);
  });
  app.post('/advance-to-next', (c) =>
    act(c, () => api.json('POST', '/_localplane/clock/advance-to-next'), 'Advanced to the next task'),
  );
  app.post('/run-until-idle', async (c) => {
    const values = await formValues(c);
    const within = values.within ?? '';
    const typed = { form: 'idle', field: 'within', values, kept: true } as const;
    let body = {};
    if (within !== '') {
      const span = parseSpan(within);
      if ('error' in span) return refused(c, typed, new DashboardApiError(422, span.error));
      body = { within_seconds: span.seconds };
    }
    return act(c, () => api.json('POST', '/_localplane/clock/run-until-idle', { body }), 'Ran until idle', typed);
  });
  return app;
}
