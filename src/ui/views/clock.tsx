import { Hono, type Context } from 'hono';
import { DashboardApiError, type DashboardApi } from '../api.ts';
import type { ClockRun, ClockState, ListedTask, Task } from '../../admin/schemas.ts';
import { describeTask, DueWork, namesFor, TaskResource, type Names } from '../due-work.tsx';
import { formValues } from '../forms.ts';
import { isFragmentRequest } from '../fragments.ts';
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
      <HtmxForm
        class="inline"
        action={`/ui/clock/${action}`}
        replaces={CLOCK_STATE}
        // One toggle for both: it offers whichever the clock's state allows.
        data-route="POST /_localplane/clock/freeze, POST /_localplane/clock/unfreeze"
      >
        <span class={`badge clock-${clock.frozen ? 'frozen' : 'running'}`}>{clock.frozen ? 'frozen' : 'running'}</span>
        <button type="submit">{clock.frozen ? 'Unfreeze' : 'Freeze'}</button>
      </HtmxForm>
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

/**
 * Set to a time, from now as the clock last read: an action's answer brings it up to date (out of band), a poll leaves
 * what is typed alone.
 */
function SetTimeForm({ now, outOfBand = false }: { now: string; outOfBand?: boolean }) {
  return (
    <HtmxForm
      id="clock-set"
      class="inline"
      action="/ui/clock/set"
      replaces={CLOCK_STATE}
      data-route="POST /_localplane/clock/set"
      {...(outOfBand ? { 'hx-swap-oob': 'true' } : {})}
    >
      <Field label="Set to (ISO 8601)">
        <input name="time" required value={now} class="mono" size={34} autocomplete="off" />
      </Field>
      <button type="submit">Set</button>
      <span class="muted">Forward runs what falls due on the way; backward runs nothing.</span>
    </HtmxForm>
  );
}

function MoveControls({ now }: { now: string }) {
  return (
    <section aria-labelledby="move-title">
      <h2 id="move-title">Move the clock</h2>
      <HtmxForm
        class="inline"
        action="/ui/clock/advance"
        replaces={CLOCK_STATE}
        data-route="POST /_localplane/clock/advance"
      >
        <button type="submit" name="span" value="1m">
          +1 minute
        </button>
        <button type="submit" name="span" value="1h">
          +1 hour
        </button>
        <button type="submit" name="span" value="1d">
          +1 day
        </button>
      </HtmxForm>
      <HtmxForm
        class="inline"
        action="/ui/clock/advance"
        replaces={CLOCK_STATE}
        data-route="POST /_localplane/clock/advance"
      >
        <Field label="Advance by">
          <input name="span" required placeholder="90s, 2h, 1d 3h" aria-describedby="span-hint" autocomplete="off" />
        </Field>
        <button type="submit" class="primary">
          Advance
        </button>
        <span id="span-hint" class="muted">
          {SPAN_HINT}; 0 runs what is due now. What falls due on the way runs at its own time.
        </span>
      </HtmxForm>
      <SetTimeForm now={now} />
      <HtmxForm
        class="inline"
        action="/ui/clock/advance-to-next"
        replaces={CLOCK_STATE}
        data-route="POST /_localplane/clock/advance-to-next"
      >
        <button type="submit">Advance to the next task</button>
        <span class="muted">Moves to the soonest task's due time and runs what is due then.</span>
      </HtmxForm>
      <HtmxForm
        class="inline"
        action="/ui/clock/run-until-idle"
        replaces={CLOCK_STATE}
        data-route="POST /_localplane/clock/run-until-idle"
      >
        <Field label="Within">
          <input name="within" placeholder="1d" size={8} aria-describedby="idle-hint" autocomplete="off" />
        </Field>
        <button type="submit">Run until idle</button>
        <span id="idle-hint" class="muted">
          From task to task until none is due within that span of now (default a day).
        </span>
      </HtmxForm>
    </section>
  );
}

/** /ui/clock: the emulator clock, frozen or running, moved by a span or to a time, and the work due on it. */
export function clockView(api: DashboardApi) {
  const app = new Hono();

  /** The view after an action (or none), with the action's refusal in place: its status and words. */
  const render = async (c: Context, refusal?: { status: number; detail: string }, ran?: RanWork) => {
    const [clock, tasks] = await Promise.all([
      api.get<ClockState>('/_localplane/clock'),
      api.get<ListedTask[]>('/_localplane/tasks'),
    ]);
    const names = await namesFor(api, [...tasks, ...(ran?.tasks ?? [])]);
    // htmx swaps only success answers: to htmx, a refusal comes back in the fragment as a 200.
    if (refusal && !isFragmentRequest(c)) c.status(refusal.status as 400);
    const error = refusal?.detail;
    return renderView(c, {
      title: 'Clock',
      active: 'clock',
      children: (
        <>
          <div class="clock-top">
            <ClockStatePanel clock={clock} error={error} ran={ran} names={names} />
            <MoveControls now={clock.now} />
          </div>
          <DueWorkPanel tasks={tasks} names={names} now={clock.now} />
        </>
      ),
      fragment: (
        <>
          <ClockStatePanel clock={clock} error={error} ran={ran} names={names} />
          <DueWorkPanel tasks={tasks} names={names} now={clock.now} outOfBand />
          {c.req.method === 'POST' && <SetTimeForm now={clock.now} outOfBand />}
        </>
      ),
    });
  };

  /** Runs an API call for an action; its refusal is shown, not thrown; a run of due work shows the tasks it ran. */
  const act = async (c: Context, call: () => Promise<unknown>, action?: string) => {
    try {
      const answer = await call();
      return render(c, undefined, action ? { action, tasks: (answer as ClockRun).ran } : undefined);
    } catch (error) {
      if (!(error instanceof DashboardApiError)) throw error;
      return render(c, { status: error.status >= 500 ? 502 : error.status, detail: error.detail });
    }
  };

  app.get('/', (c) => render(c));
  app.post('/freeze', (c) => act(c, () => api.json('POST', '/_localplane/clock/freeze')));
  app.post('/unfreeze', (c) => act(c, () => api.json('POST', '/_localplane/clock/unfreeze')));
  app.post('/advance', async (c) => {
    const span = parseSpan((await formValues(c)).span ?? '');
    if ('error' in span) return render(c, { status: 422, detail: span.error });
    return act(c, () => api.json('POST', '/_localplane/clock/advance', { body: { seconds: span.seconds } }));
  });
  app.post('/set', async (c) => {
    const time = (await formValues(c)).time?.trim() ?? '';
    return act(c, () => api.json('POST', '/_localplane/clock/set', { body: { time } }));
  });
  app.post('/advance-to-next', (c) =>
    act(c, () => api.json('POST', '/_localplane/clock/advance-to-next'), 'Advanced to the next task'),
  );
  app.post('/run-until-idle', async (c) => {
    const within = (await formValues(c)).within ?? '';
    let body = {};
    if (within !== '') {
      const span = parseSpan(within);
      if ('error' in span) return render(c, { status: 422, detail: span.error });
      body = { within_seconds: span.seconds };
    }
    return act(c, () => api.json('POST', '/_localplane/clock/run-until-idle', { body }), 'Ran until idle');
  });
  return app;
}
