// The dashboard's few behaviours that are not htmx attributes: the theme, copying, charts (an SQL result's too).
/* global uPlot -- from uPlot.iife.min.js, which the views with charts load (deferred, so after this script) */
(() => {
  const THEMES = ['system', 'light', 'dark'];
  const stored = () => {
    try {
      return localStorage.getItem('localplane-theme') ?? 'system';
    } catch {
      return 'system';
    }
  };
  const apply = (theme) => {
    if (theme === 'system') document.documentElement.removeAttribute('data-theme');
    else document.documentElement.setAttribute('data-theme', theme);
    const button = document.querySelector('[data-theme-toggle]');
    if (button) button.textContent = `Theme: ${theme}`;
  };
  // Set before the body is drawn, so a dark page does not flash light.
  apply(stored());

  /** A colour variable as the canvas takes it: light-dark() resolved by an element's computed colour. */
  const colourOf = (name) => {
    const probe = document.createElement('span');
    probe.style.color = `var(${name})`;
    document.body.append(probe);
    const colour = getComputedStyle(probe).color;
    probe.remove();
    return colour;
  };

  /** A uPlot chart from a figure's data-chart: {"x": [epoch seconds], "series": [{"label", "values"}]}. */
  const drawChart = (figure) => {
    if (figure.dataset.drawn || typeof uPlot === 'undefined') return;
    figure.dataset.drawn = 'true';
    const spec = JSON.parse(figure.dataset.chart);
    const colours = ['--ok', '--accent', '--warn', '--bad'].map(colourOf);
    const axis = { stroke: colourOf('--fg-soft'), grid: { stroke: colourOf('--line') } };
    new uPlot(
      {
        width: Math.max(figure.clientWidth, 300),
        height: 200,
        scales: { x: { time: spec.time !== false } },
        // The y axis as wide as its longest label (uPlot's default 50 px cuts 5-digit numbers).
        axes: [
          axis,
          {
            ...axis,
            size: (self, values) => Math.max(50, ...(values ?? []).map((value) => String(value).length * 8 + 18)),
          },
        ],
        series: [
          { label: spec.xLabel ?? 'time' },
          ...spec.series.map((series, index) => ({
            label: series.label,
            stroke: colours[index % colours.length],
            width: 2,
          })),
        ],
      },
      [spec.x, ...spec.series.map((series) => series.values)],
      figure,
    );
  };

  /**
   * An SQL result's chart of one column against another: the columns its x and y selects name,
   * from its figure's data-columns ([{"name", "kind": "number" | "time", "values"}]), in x order.
   */
  const drawColumns = (section) => {
    const figure = section.querySelector('figure[data-columns]');
    const columns = JSON.parse(figure.dataset.columns);
    const [x, y] = ['x', 'y'].map((axis) =>
      columns.find((column) => column.name === section.querySelector(`[data-axis="${axis}"]`).value),
    );
    const points = x.values
      .map((value, index) => [value, y.values[index]])
      .filter(([a, b]) => a !== null && b !== null)
      .sort((a, b) => a[0] - b[0]);
    figure.dataset.chart = JSON.stringify({
      time: x.kind === 'time',
      xLabel: x.name,
      x: points.map((point) => point[0]),
      series: [{ label: y.name, values: points.map((point) => point[1]) }],
    });
    figure.replaceChildren();
    delete figure.dataset.drawn;
    drawChart(figure);
  };

  const enhance = (root) => {
    root.querySelectorAll?.('[data-chart]').forEach(drawChart);
    root.querySelectorAll?.('[data-xy-chart]').forEach(drawColumns);
  };

  // Form errors and linked rows (issue 38, points 9 to 11). After htmx swaps in a form the API refused, the focus goes
  // to its first invalid field (a whole page has the autofocus attribute on it). The element the URL's #fragment names
  // keeps its highlight when a refresh swaps in a new copy of it, which :target alone does not match.
  const focusFirstInvalid = (root) => {
    const invalid = root.querySelector?.('[aria-invalid="true"]');
    if (invalid && !root.contains(document.activeElement)) invalid.focus();
  };
  const markTarget = () => {
    document.querySelectorAll('.is-target').forEach((element) => element.classList.remove('is-target'));
    const id = decodeURIComponent(location.hash.slice(1));
    if (id) document.getElementById(id)?.classList.add('is-target');
  };
  // A value the browser refuses by the field's constraints (min, max, pattern, required) is marked as the API's
  // refusals are: aria-invalid, its message beside the field and describing it, until the value is valid.
  let browserMessages = 0;
  document.addEventListener(
    'invalid',
    (event) => {
      const field = event.target;
      let message = field.browserMessage;
      if (!message) {
        message = document.createElement('span');
        message.className = 'field-error';
        message.id = `browser-invalid-${++browserMessages}`;
        (field.closest('label') ?? field).after(message);
        field.setAttribute('aria-describedby', `${field.getAttribute('aria-describedby') ?? ''} ${message.id}`.trim());
        field.browserMessage = message;
      }
      message.textContent = field.validationMessage;
      field.setAttribute('aria-invalid', 'true');
    },
    true,
  );
  document.addEventListener('input', (event) => {
    const field = event.target;
    const message = field.browserMessage;
    if (!message || !field.validity.valid) return;
    message.remove();
    delete field.browserMessage;
    const describedBy = field.getAttribute('aria-describedby').replace(message.id, '').trim();
    if (describedBy) field.setAttribute('aria-describedby', describedBy);
    else field.removeAttribute('aria-describedby');
    field.removeAttribute('aria-invalid');
  });

  document.addEventListener('DOMContentLoaded', () => {
    markTarget();
    window.addEventListener('hashchange', markTarget);
    document.body.addEventListener('htmx:load', (event) => {
      focusFirstInvalid(event.target);
      markTarget();
    });
  });

  document.addEventListener('DOMContentLoaded', () => {
    apply(stored());
    enhance(document);
    document.body.addEventListener('htmx:load', (event) => enhance(event.target));
    // A live table keeps its newest data-max-rows rows, and drops its "none yet" row once one comes.
    document.body.addEventListener('htmx:sseMessage', (event) => {
      const rows = event.target;
      const max = Number(rows.dataset?.maxRows);
      if (!max) return;
      rows.querySelector('tr[data-placeholder]')?.remove();
      while (rows.rows.length > max) rows.deleteRow(-1);
    });
  });

  // A chart's axis picked: redrawn, and the page's URL names the pick (a link to it shows the same chart).
  document.addEventListener('change', (event) => {
    const section = event.target.closest?.('[data-xy-chart]');
    if (!section || !event.target.dataset.axis) return;
    drawColumns(section);
    const url = new URL(location.href);
    url.searchParams.set(event.target.name, event.target.value);
    history.replaceState(history.state, '', url);
  });

  document.addEventListener('click', (event) => {
    const toggle = event.target.closest?.('[data-theme-toggle]');
    if (toggle) {
      const next = THEMES[(THEMES.indexOf(stored()) + 1) % THEMES.length];
      try {
        localStorage.setItem('localplane-theme', next);
      } catch {
        // Storage refused (a private window, say): the theme still applies to this page.
      }
      apply(next);
      return;
    }
    const copy = event.target.closest?.('[data-copy]');
    if (copy) {
      const text = copy.dataset.copy;
      const done = () => {
        const label = copy.textContent;
        copy.textContent = 'Copied';
        setTimeout(() => (copy.textContent = label), 1500);
      };
      navigator.clipboard?.writeText(text).then(done, () => window.prompt('Copy this:', text));
    }
  });
})();

// The Requests view from the keyboard: a request's detail focused as it loads (its copy buttons the next Tabs), its
// row marked; Esc back to the row (the detail closed on a narrow screen); j and k from row to row.
(() => {
  const NARROW = '(max-width: 900px)';
  const rows = () => [...document.querySelectorAll('#request-rows tr[data-id]')];
  const selectedRow = () => document.querySelector('#request-rows tr[aria-current="true"]');
  const typing = (target) => target.closest?.('input, textarea, select, [contenteditable]') != null;

  const select = (row) => {
    selectedRow()?.removeAttribute('aria-current');
    row?.setAttribute('aria-current', 'true');
  };

  document.addEventListener('htmx:afterSwap', (event) => {
    const detail = event.target;
    if (detail.id !== 'request-detail') return;
    detail.hidden = false;
    select(event.detail.requestConfig?.elt?.closest('#request-rows tr[data-id]'));
    const heading = detail.querySelector('#request-title') ?? detail.querySelector('[role="alert"]');
    if (!heading) return;
    if (!heading.hasAttribute('tabindex')) heading.setAttribute('tabindex', '-1');
    // On a narrow screen the detail is below the list: it is brought into view; beside the list it is in view.
    const narrow = matchMedia(NARROW).matches;
    heading.focus({ preventScroll: !narrow });
    if (narrow) detail.scrollIntoView({ block: 'start' });
  });

  document.addEventListener('keydown', (event) => {
    if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey || typing(event.target)) return;
    if (!document.getElementById('request-rows')) return;
    if (event.key === 'Escape') {
      const row = selectedRow();
      if (!row) return;
      row.querySelector('a')?.focus();
      if (matchMedia(NARROW).matches) {
        document.getElementById('request-detail').hidden = true;
        history.replaceState(history.state, '', `/ui/requests${location.search}`);
      }
      event.preventDefault();
    } else if (event.key === 'j' || event.key === 'k') {
      const all = rows();
      if (all.length === 0) return;
      const current = all.findIndex((row) => row.contains(document.activeElement));
      const from = current >= 0 ? current : all.indexOf(selectedRow());
      const next = from < 0 ? 0 : Math.min(Math.max(from + (event.key === 'j' ? 1 : -1), 0), all.length - 1);
      all[next].querySelector('a')?.focus();
      event.preventDefault();
    }
  });
})();
