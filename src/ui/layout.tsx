import type { Context } from 'hono';
import { cloneElement, createContext, useContext, type Child, type JSX, type JSXNode } from 'hono/jsx';
import { raw } from 'hono/html';
import { assetPath } from './assets.ts';
import { isFragmentRequest } from './fragments.ts';
import type { FormState } from './forms.ts';

/** The views in the order the navigation lists them. */
const VIEWS = [
  { name: 'overview', path: '/ui', label: 'Overview' },
  { name: 'requests', path: '/ui/requests', label: 'Requests' },
  { name: 'exports', path: '/ui/exports', label: 'Exports' },
  { name: 'objects', path: '/ui/objects', label: 'Objects' },
  { name: 'sql', path: '/ui/sql', label: 'SQL' },
  { name: 'deployments', path: '/ui/deployments', label: 'Deployments' },
  { name: 'clock', path: '/ui/clock', label: 'Clock' },
  { name: 'faults', path: '/ui/faults', label: 'Faults' },
  { name: 'state', path: '/ui/state', label: 'State' },
] as const;

/**
 * No eval (the CSP allows none), no injected styles, no history cache (a page comes back from the
 * server), and an error's answer swapped in like a success: it holds the API's detail in an alert.
 */
const HTMX_CONFIG = JSON.stringify({
  allowEval: false,
  includeIndicatorStyles: false,
  historyCacheSize: 0,
  responseHandling: [
    { code: '204', swap: false },
    { code: '[23]..', swap: true },
    { code: '[45]..', swap: true, error: true },
  ],
});

export type ViewName = (typeof VIEWS)[number]['name'];

export interface PageProps {
  /** The page's own title; the tab shows it before "localplane". */
  title: string;
  /** The view the navigation marks as the current page; none for a page of no view (an error). */
  active?: ViewName;
  /** uPlot's script and styles, for views that draw charts. */
  charts?: boolean;
  children?: Child;
}

function Page({ title, active, charts = false, children }: PageProps) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <meta name="color-scheme" content="light dark" />
        <meta name="htmx-config" content={HTMX_CONFIG} />
        <title>{`${title} · localplane`}</title>
        {/* No icon of its own: an empty one keeps the browser from asking for /favicon.ico, which answers 404. */}
        <link rel="icon" href="data:," />
        <link rel="stylesheet" href={assetPath('ui.css')} />
        {charts && <link rel="stylesheet" href={assetPath('uPlot.min.css')} />}
        <script src={assetPath('ui.js')}></script>
        <script src={assetPath('htmx.min.js')} defer></script>
        <script src={assetPath('sse.min.js')} defer></script>
        {charts && <script src={assetPath('uPlot.iife.min.js')} defer></script>}
      </head>
      <body>
        <a class="skip" href="#main">
          Skip to content
        </a>
        <header class="top">
          <a class="brand" href="/ui">
            localplane
          </a>
          <nav aria-label="Views">
            <ul>
              {VIEWS.map((view) => (
                <li>
                  <a href={view.path} aria-current={view.name === active ? 'page' : undefined}>
                    {view.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <button type="button" class="time-toggle" data-time-toggle aria-live="polite">
            Times: UTC
          </button>
          <button type="button" class="theme-toggle" data-theme-toggle aria-live="polite">
            Theme: system
          </button>
        </header>
        <main id="main" tabindex={-1}>
          <h1>{title}</h1>
          {children}
        </main>
      </body>
    </html>
  );
}

/** The whole page, or only `fragment` (default: the page's content) when htmx asks for a part. */
export function renderView(c: Context, props: PageProps & { fragment?: Child }) {
  if (isFragmentRequest(c)) return c.html(<>{props.fragment ?? props.children}</>);
  return c.html(
    <>
      {raw('<!doctype html>')}
      <Page {...props} />
    </>,
  );
}

type HtmxFormProps = JSX.HTMLAttributes & {
  method?: 'get' | 'post';
  action: string;
  /** The element (a CSS selector) whose place the answer takes. */
  replaces: string;
  /** The API's refusal of what the form sent: its Field children show their errors (see FieldErrors). */
  state?: FormState;
};

/**
 * A form that works as a plain one without script and, through htmx, puts the answer in place of an element of the
 * page. A get's URL goes to the address bar, as a plain get's would.
 */
export function HtmxForm({ method = 'post', action, replaces, state, children, ...attributes }: HtmxFormProps) {
  const get = method === 'get';
  const fields = state?.fieldErrors ? <FieldErrors state={state}>{children}</FieldErrors> : children;
  return (
    <form
      {...attributes}
      method={method}
      action={action}
      hx-get={get ? action : undefined}
      hx-post={get ? undefined : action}
      hx-target={replaces}
      hx-swap="outerHTML"
      hx-push-url={get ? 'true' : undefined}
    >
      {fields}
    </form>
  );
}

/**
 * A table's head: a header a column, each scoped to its column; those named in `numeric` align as numbers; `classes`,
 * a column's own class (the stylesheet sets its width by it, not by its place).
 */
export const TableHead = ({
  columns,
  numeric = [],
  classes = {},
}: {
  columns: readonly string[];
  numeric?: readonly string[];
  classes?: Readonly<Record<string, string>>;
}) => (
  <thead>
    <tr>
      {columns.map((column) => (
        <th
          scope="col"
          class={[numeric.includes(column) && 'num', classes[column]].filter(Boolean).join(' ') || undefined}
        >
          {column}
        </th>
      ))}
    </tr>
  </thead>
);

/** A select's options, each its own value; `any`, the label of a first option whose empty value leaves it unset. */
export const Options = ({
  choices,
  selected,
  any,
}: {
  choices: readonly string[];
  selected?: string;
  any?: string;
}) => (
  <>
    {any !== undefined && <option value="">{any}</option>}
    {choices.map((choice) => (
      <option value={choice} selected={choice === selected}>
        {choice}
      </option>
    ))}
  </>
);

/** Name-value pairs as a description list; `mono` for names and values as sent (headers, query). */
export const DetailList = ({
  pairs,
  mono = false,
}: {
  pairs: readonly (readonly [string, unknown])[];
  mono?: boolean;
}) => (
  <dl class={mono ? 'details mono' : 'details'}>
    {pairs.map(([name, value]) => (
      <>
        <dt>{name}</dt>
        <dd>{value}</dd>
      </>
    ))}
  </dl>
);

/** An error of the API, as the dashboard shows it in place of what could not be read or done. */
export const ErrorNote = ({ message }: { message: string }) => (
  <p class="error" role="alert">
    {message}
  </p>
);

/** A page (or fragment) saying what the API refused, with the API's status; an API failure shows as 502. */
export function renderError(c: Context, status: number, detail: string) {
  c.status(status >= 500 ? 502 : (status as 400));
  return renderView(c, { title: 'Error', children: <ErrorNote message={detail} /> });
}

// Form errors (issue 38, point 11): each refused field marked at its place, a summary of them first.

/** The refused fields of the form being drawn, and whether its first invalid field has had the focus given. */
interface FieldErrorScope {
  errors: Record<string, string>;
  focusGiven: boolean;
}
const FieldErrorContext = createContext<FieldErrorScope | null>(null);

/** The id of a refused field's input: the summary links to it. */
const invalidFieldId = (name: string) => `invalid-${name}`;

/** A field's name as the summary words it: `match_path` is "Match path". */
const fieldTitle = (name: string) => {
  const words = name.replaceAll('_', ' ');
  return words[0]!.toUpperCase() + words.slice(1);
};

/**
 * The fields inside it show the API's refusal of each (Field); first, a summary lists the refusals, each a link to its
 * field. HtmxForm uses it for its `state`; a plain form wraps its fields in it.
 */
export function FieldErrors({ state, children }: { state?: FormState; children?: Child }) {
  const errors = state?.fieldErrors ?? {};
  const refused = Object.entries(errors);
  return (
    <FieldErrorContext.Provider value={{ errors, focusGiven: false }}>
      {refused.length > 0 && (
        <div class="error-summary" role="alert">
          <p>{refused.length === 1 ? 'One field needs a change:' : `${refused.length} fields need a change:`}</p>
          <ul>
            {refused.map(([name, message]) => (
              <li>
                <a href={`#${invalidFieldId(name)}`}>{`${fieldTitle(name)}: ${message}`}</a>
              </li>
            ))}
          </ul>
        </div>
      )}
      {children}
    </FieldErrorContext.Provider>
  );
}

/**
 * A labelled input (its only child, named as the API's field after the request part, `_` for `.`: see refusedForm in
 * forms.ts). When the API refused its value, the input is marked aria-invalid, described by the message beside it, and
 * the form's first such input has autofocus (a whole page; after an htmx swap ui.js moves the focus).
 */
export function Field({ label, children }: { label: Child; children: Child }) {
  const scope = useContext(FieldErrorContext);
  // JSX gives an element where its type says only Child.
  const element = children as JSXNode;
  const name = String(element.props.name);
  const message = scope?.errors[name];
  if (scope === null || message === undefined)
    return (
      <label>
        {label}
        {children}
      </label>
    );
  const id = invalidFieldId(name);
  const focus = !scope.focusGiven;
  scope.focusGiven = true;
  const input = cloneElement(element, {
    id,
    'aria-invalid': 'true',
    'aria-describedby': [element.props['aria-describedby'], `${id}-error`].filter(Boolean).join(' '),
    autofocus: focus,
  });
  return (
    <div class="field invalid">
      <label>
        {label}
        {input}
      </label>
      <span class="field-error" id={`${id}-error`}>
        {message}
      </span>
    </div>
  );
}

// Count fields (issue 38 review: one component for the views' whole-number inputs).

/** A labelled whole-number field (runs, times, hours): from `min` (default 1), by ones, a few digits wide. */
export const CountField = ({
  label,
  name,
  value,
  min = 1,
  max,
}: {
  label: Child;
  name: string;
  value?: string;
  min?: number;
  max?: number;
}) => (
  <Field label={label}>
    <input name={name} type="number" inputmode="numeric" min={min} max={max} step={1} size={4} value={value} />
  </Field>
);
