// The dashboard's few behaviours that are not htmx attributes: the theme, the time zone, copying, charts (an SQL
// result's too), the SQL editor's keys, schema and history.
/* global uPlot -- from uPlot.iife.min.js, which the views with charts load (deferred, so after this script) */
/* global htmx -- from htmx.min.js (deferred, so after this script) */
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

  // Times: the server writes them in UTC (time.tsx); the header's toggle shows them in the browser's zone instead.
  const TIME_ZONES = ['utc', 'local'];
  const storedZone = () => {
    try {
      return localStorage.getItem('localplane-time') === 'local' ? 'local' : 'utc';
    } catch {
      return 'utc';
    }
  };
  /** An instant as time.tsx's formats write it ('datetime', 'datetime-ms', 'time', 'time-ms'), in UTC. */
  const utcText = (date, format) => {
    const iso = date.toISOString();
    const clock = iso.slice(11, format.endsWith('-ms') ? 23 : 19);
    return format.startsWith('datetime') ? `${iso.slice(0, 10)} ${clock} UTC` : clock;
  };
  // The browser zone's short name (GMT+5:30, EST) a UTC offset. Only the name needs Intl, and making a formatter costs
  // more than a page of times written from the Date's own fields, so one is made when a local time is first shown.
  let zoneNamer;
  const zoneNames = new Map();
  const zoneNameOf = (date) => {
    const offset = date.getTimezoneOffset();
    if (!zoneNames.has(offset)) {
      zoneNamer ??= new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' });
      zoneNames.set(offset, zoneNamer.formatToParts(date).find((part) => part.type === 'timeZoneName').value);
    }
    return zoneNames.get(offset);
  };
  const twoDigits = (number) => String(number).padStart(2, '0');
  /** An instant in the browser's zone, in the same formats. */
  const localText = (date, format) => {
    const milliseconds = format.endsWith('-ms') ? `.${String(date.getMilliseconds()).padStart(3, '0')}` : '';
    const clock = `${twoDigits(date.getHours())}:${twoDigits(date.getMinutes())}:${twoDigits(date.getSeconds())}`;
    if (!format.startsWith('datetime')) return `${clock}${milliseconds}`;
    const day = `${date.getFullYear()}-${twoDigits(date.getMonth() + 1)}-${twoDigits(date.getDate())}`;
    return `${day} ${clock}${milliseconds} ${zoneNameOf(date)}`;
  };
  const timeText = (date, format, zone) => (zone === 'utc' ? utcText : localText)(date, format);
  /** Every time under root in the chosen zone (the server writes UTC, so a UTC page is left as it is). */
  const showTimes = (root) => {
    const zone = storedZone();
    const button = document.querySelector('[data-time-toggle]');
    if (button) button.textContent = `Times: ${zone === 'utc' ? 'UTC' : 'local'}`;
    root.querySelectorAll?.('time[datetime][data-format]').forEach((time) => {
      const date = new Date(time.dateTime);
      if (Number.isNaN(date.getTime())) return;
      const text = timeText(date, time.dataset.format, zone);
      if (time.textContent !== text) time.textContent = text;
    });
  };
  // A time's title, the other zone's reading to the millisecond, is written as it is pointed at or focused: a page of
  // requests has hundreds of times, and few are read that way.
  const titleTime = (event) => {
    const time = event.target.closest?.('time[datetime]');
    const date = time && new Date(time.dateTime);
    if (!date || Number.isNaN(date.getTime())) return;
    time.title = timeText(date, 'datetime-ms', storedZone() === 'utc' ? 'local' : 'utc');
  };
  document.addEventListener('pointerover', titleTime);
  document.addEventListener('focusin', titleTime);

  /** A colour variable as the canvas takes it: light-dark() resolved by an element's computed colour. */
  const colourOf = (name) => {
    const probe = document.createElement('span');
    probe.style.color = `var(${name})`;
    document.body.append(probe);
    const colour = getComputedStyle(probe).color;
    probe.remove();
    return colour;
  };

  /**
   * uPlot's time axis labels by tick spacing, 24-hour with ISO dates (its own table's layout: the spacing in seconds,
   * the label, then the label where the year, month, day, hour, minute or second changes, then the mode).
   */
  const DAY = 86_400;
  const TIME_TICKS = [
    [DAY * 365, '{YYYY}', null, null, null, null, null, null, 1],
    [DAY * 28, '{MMM}', '\n{YYYY}', null, null, null, null, null, 1],
    [DAY, '{MM}-{DD}', '\n{YYYY}', null, null, null, null, null, 1],
    [3600, '{HH}:00', '\n{YYYY}-{MM}-{DD}', null, '\n{MM}-{DD}', null, null, null, 1],
    [60, '{HH}:{mm}', '\n{YYYY}-{MM}-{DD}', null, '\n{MM}-{DD}', null, null, null, 1],
    [1, ':{ss}', '\n{YYYY}-{MM}-{DD} {HH}:{mm}', null, '\n{MM}-{DD} {HH}:{mm}', null, '\n{HH}:{mm}', null, 1],
    [0.001, ':{ss}.{fff}', '\n{YYYY}-{MM}-{DD} {HH}:{mm}', null, '\n{MM}-{DD} {HH}:{mm}', null, '\n{HH}:{mm}', null, 1],
  ];

  /** A Date whose local fields read an instant's UTC ones, from epoch seconds. */
  const utcFieldsAsLocal = (seconds) => {
    const date = new Date(seconds * 1000);
    return new Date(
      date.getUTCFullYear(),
      date.getUTCMonth(),
      date.getUTCDate(),
      date.getUTCHours(),
      date.getUTCMinutes(),
      date.getUTCSeconds(),
      date.getUTCMilliseconds(),
    );
  };

  /**
   * A uPlot chart from a figure's data-chart: {"x": [epoch seconds], "series": [{"label", "values"}]}; with "time":
   * false, x is a number; with "categories": [names], x is each one's index and the series are bars.
   */
  const drawChart = (figure) => {
    if (figure.dataset.drawn || typeof uPlot === 'undefined') return;
    figure.dataset.drawn = 'true';
    const spec = JSON.parse(figure.dataset.chart);
    const { categories } = spec;
    const time = spec.time !== false && !categories;
    const colours = ['--ok', '--accent', '--warn', '--bad'].map(colourOf);
    const axis = { stroke: colourOf('--fg-soft'), grid: { stroke: colourOf('--line') } };
    const xAxis = categories
      ? {
          ...axis,
          splits: () => categories.map((_, index) => index),
          values: (self, ticks) => ticks.map((index) => categories[index] ?? ''),
        }
      : time
        ? { ...axis, values: TIME_TICKS }
        : axis;
    figure.uplot = new uPlot(
      {
        width: Math.max(figure.clientWidth, 300),
        height: 200,
        // A time axis in the zone the page's times are in (uPlot's own default is the browser's). uPlot reads the
        // date's local fields, so UTC's are set there; its own tzDate makes an Intl formatter a call, hundreds a chart.
        tzDate: storedZone() === 'utc' ? utcFieldsAsLocal : undefined,
        scales: { x: categories ? { time: false, range: () => [-0.5, categories.length - 0.5] } : { time } },
        // The y axis as wide as its longest label (uPlot's default 50 px cuts 5-digit numbers).
        axes: [
          xAxis,
          {
            ...axis,
            size: (self, values) => Math.max(50, ...(values ?? []).map((value) => String(value).length * 8 + 18)),
          },
        ],
        series: [
          {
            label: spec.xLabel ?? 'time',
            value: categories
              ? (self, index) => categories[index] ?? '--'
              : time
                ? '{YYYY}-{MM}-{DD} {HH}:{mm}:{ss}'
                : undefined,
          },
          ...spec.series.map((series, index) => ({
            label: series.label,
            stroke: colours[index % colours.length],
            width: 2,
            ...(categories
              ? { fill: colours[index % colours.length], paths: uPlot.paths.bars({ size: [0.6, 64] }) }
              : {}),
          })),
        ],
      },
      [spec.x, ...spec.series.map((series) => series.values)],
      figure,
    );
  };

  /**
   * An SQL result's chart of one column against another: the columns its x and y selects name, from its figure's
   * data-columns ([{"name", "kind": "number" | "time" | "category", "values"}]), in x order, or bars by category.
   */
  const drawColumns = (section) => {
    const figure = section.querySelector('figure[data-columns]');
    const columns = JSON.parse(figure.dataset.columns);
    const [x, y] = ['x', 'y'].map((axis) =>
      columns.find((column) => column.name === section.querySelector(`[data-axis="${axis}"]`).value),
    );
    const points = x.values
      .map((value, index) => [value, y.values[index]])
      .filter(([a, b]) => a !== null && b !== null);
    if (x.kind === 'category') {
      // A bar a category, in the order the rows name them; a category named by several rows has their sum.
      const sums = new Map();
      for (const [category, value] of points) sums.set(category, (sums.get(category) ?? 0) + value);
      figure.dataset.chart = JSON.stringify({
        categories: [...sums.keys()],
        xLabel: x.name,
        x: [...sums.keys()].map((_, index) => index),
        series: [{ label: y.name, values: [...sums.values()] }],
      });
    } else {
      points.sort((a, b) => a[0] - b[0]);
      figure.dataset.chart = JSON.stringify({
        time: x.kind === 'time',
        xLabel: x.name,
        x: points.map((point) => point[0]),
        series: [{ label: y.name, values: points.map((point) => point[1]) }],
      });
    }
    figure.uplot?.destroy();
    figure.replaceChildren();
    delete figure.dataset.drawn;
    drawChart(figure);
  };

  /** The charts drawn again (the time zone changed). */
  const redrawCharts = () =>
    document.querySelectorAll('[data-chart][data-drawn]').forEach((figure) => {
      figure.uplot?.destroy();
      delete figure.dataset.drawn;
      drawChart(figure);
    });

  /** A table's column names by place (a head cell spanning two names both). */
  const columnNamesOf = (table) =>
    [...(table?.tHead?.rows[0]?.cells ?? [])].flatMap((cell) => Array(cell.colSpan).fill(cell.textContent.trim()));
  const labelRow = (row, names) => {
    let column = 0;
    for (const cell of row.cells) {
      if (cell.tagName === 'TD' && cell.colSpan === 1 && names[column]) cell.dataset.label = names[column];
      column += cell.colSpan;
    }
  };
  /** Each body cell names its column (data-label), for the phone layout that stacks a table's row into a card. */
  const labelCells = (root) => {
    const tables = root.closest?.('table') ? [root.closest('table')] : [...(root.querySelectorAll?.('table') ?? [])];
    for (const table of tables) {
      const names = columnNamesOf(table);
      if (names.length === 0) continue;
      for (const body of table.tBodies) for (const row of body.rows) labelRow(row, names);
    }
  };

  // --- The Requests view's live rows (issue 38, point 6) ---

  /** A live table keeps its newest data-max-rows rows, and drops its "none yet" row once one comes. */
  const keepNewest = (rows) => {
    const max = Number(rows.dataset?.maxRows);
    if (!max) return;
    rows.querySelector('tr[data-placeholder]')?.remove();
    while (rows.rows.length > max) rows.deleteRow(-1);
  };

  const withAttributes = (element, attributes) => {
    for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, value);
    return element;
  };

  /** Emulator and wall clock this far apart or more are shown both (time.tsx's EmulatorTime). */
  const SAME_TIME_MS = 1000;

  /** An objstore request's path decoded (a key's `=` rather than `%3D`), the API's as sent. */
  const readablePath = (summary) => {
    if (summary.source !== 'objstore') return summary.path;
    try {
      return decodeURIComponent(summary.path);
    } catch {
      return summary.path;
    }
  };

  /**
   * A journal entry's summary as the table's row: a clone of the row the server renders for the live table
   * (RequestRow in views/requests.tsx, in <template id="request-row">), filled in; a cell that differs (the time pair,
   * a fired rule's link, no reply's title) comes from the other template's row. Every text is set as text.
   * test/ui/requests-live-browser.test.ts compares the rows with the server's.
   */
  const liveRow = (summary, names, query) => {
    const [template, other] = ['request-row', 'request-row-other'].map(
      (id) => document.getElementById(id).content.firstElementChild,
    );
    const row = template.cloneNode(true);
    /** The row's cell of that column, or, `fromOther`, the other template's cell put in its place. */
    const cell = (column, fromOther = false) => {
      const own = row.querySelector(`.${column}`);
      if (!fromOther) return own;
      const taken = other.querySelector(`.${column}`).cloneNode(true);
      own.replaceWith(taken);
      return taken;
    };
    const href = `/ui/requests/${summary.id}${query ? `?${query}` : ''}`;
    const path = readablePath(summary);
    const workspace = summary.workspace_id === null ? '—' : (names[summary.workspace_id] ?? summary.workspace_id);
    const apart = Math.abs(Date.parse(summary.time) - Date.parse(summary.wall_time)) >= SAME_TIME_MS;
    row.id = `request-${summary.id}`;
    row.dataset.id = String(summary.id);
    const times = cell('col-time', apart).querySelectorAll('time');
    [summary.time, summary.wall_time].slice(0, times.length).forEach((at, index) => {
      const date = new Date(at);
      times[index].setAttribute('datetime', date.toISOString());
      times[index].textContent = utcText(date, times[index].dataset.format);
    });
    cell('col-source').textContent = summary.source;
    cell('col-method').textContent = summary.method;
    const link = cell('path').querySelector('a');
    withAttributes(link, { href, title: path }).textContent = path;
    const status = cell('col-status', summary.status === 499).querySelector('span');
    status.className = `status-${Math.floor(summary.status / 100)}`;
    status.textContent = String(summary.status);
    withAttributes(cell('col-workspace'), { title: workspace }).textContent = workspace;
    const rule = cell('col-fault-rule', summary.fault_rule_id !== null).querySelector('a');
    if (rule) withAttributes(rule, { href: `/ui/faults#${summary.fault_rule_id}` }).textContent = summary.fault_rule_id;
    cell('col-ms').textContent = summary.duration_ms.toFixed(1);
    return row;
  };

  /** A chunk of the stream's summaries (oldest first) put at the top of the table, newest first. */
  const addLiveRows = (rows, summaries) => {
    const names = JSON.parse(rows.dataset.workspaceNames ?? '{}');
    const query = rows.dataset.rowQuery ?? '';
    const newest = summaries.slice(-(Number(rows.dataset.maxRows) || summaries.length)).reverse();
    const added = newest.map((summary) => liveRow(summary, names, query));
    rows.prepend(...added);
    keepNewest(rows);
    const columns = columnNamesOf(rows.closest('table'));
    for (const row of added) {
      showTimes(row);
      labelRow(row, columns);
    }
  };
  // A burst's chunks (one each 100 ms from the server) are drawn at most every LIVE_DRAW_MS, the ones between merged:
  // each draw lays the table out again, four a second took a third of the CPU a burst's load generator shares with the
  // browser, and no one reads rows that fast. A request after a quiet spell is drawn at once.
  const LIVE_DRAW_MS = 1000;
  const liveDraws = new WeakMap();
  const drawLiveRows = (rows, summaries) => {
    const draw = liveDraws.get(rows) ?? { at: -Infinity, pending: null };
    liveDraws.set(rows, draw);
    if (draw.pending) {
      draw.pending.push(...summaries);
      return;
    }
    draw.pending = summaries;
    setTimeout(
      () => {
        draw.at = performance.now();
        const pending = draw.pending;
        draw.pending = null;
        addLiveRows(rows, pending);
      },
      Math.max(0, draw.at + LIVE_DRAW_MS - performance.now()),
    );
  };
  // A row's link opens its request beside the list (an htmx request, its URL pushed); with a modifier key or another
  // button it does what a link does. One listener serves every row, the stream's too: htmx processing each row's link
  // as the page loads took longer than drawing the table.
  document.addEventListener('click', (event) => {
    const link = event.target.closest?.('a[data-detail-link]');
    if (!link || event.defaultPrevented || event.button !== 0) return;
    if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    htmx.ajax('GET', link.href, { source: link, event, target: '#request-detail', swap: 'innerHTML', push: link.href });
  });

  const enhance = (root) => {
    showTimes(root);
    labelCells(root);
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

  // A form sent again through htmx loses the marks of the API's last refusal (Field in layout.tsx): a form whose answer
  // goes elsewhere comes back, out of band, only when refused again.
  document.addEventListener('htmx:beforeRequest', (event) => {
    const form = event.detail.elt;
    if (!(form instanceof HTMLFormElement)) return;
    form.querySelector('.error-summary')?.remove();
    form.querySelectorAll('.field.invalid').forEach((field) => {
      field.classList.remove('invalid');
      const message = field.querySelector(':scope > .field-error');
      const input = field.querySelector('[aria-invalid="true"]');
      if (input && message) {
        const describedBy = (input.getAttribute('aria-describedby') ?? '').replace(message.id, '').trim();
        if (describedBy) input.setAttribute('aria-describedby', describedBy);
        else input.removeAttribute('aria-describedby');
        input.removeAttribute('aria-invalid');
      }
      message?.remove();
    });
  });

  document.addEventListener('DOMContentLoaded', () => {
    markTarget();
    window.addEventListener('hashchange', markTarget);
    document.body.addEventListener('htmx:load', (event) => {
      focusFirstInvalid(event.target);
      markTarget();
    });
  });

  // The SQL editor: the last queries run, kept in the browser, newest first.
  const SQL_HISTORY = 'localplane-sql-history';
  const SQL_HISTORY_SIZE = 20;
  const sqlHistory = () => {
    try {
      const entries = JSON.parse(localStorage.getItem(SQL_HISTORY) ?? '[]');
      return Array.isArray(entries) ? entries.filter((entry) => typeof entry === 'string') : [];
    } catch {
      return [];
    }
  };
  const showSqlHistory = () => {
    const section = document.getElementById('sql-history');
    if (!section) return;
    const entries = sqlHistory();
    section.hidden = entries.length === 0;
    section.querySelector('ol').replaceChildren(
      ...entries.map((sql) => {
        const button = document.createElement('button');
        button.type = 'button';
        button.className = 'mono';
        button.dataset.sqlHistory = sql;
        button.textContent = sql;
        const item = document.createElement('li');
        item.append(button);
        return item;
      }),
    );
  };
  const rememberSql = (sql) => {
    if (!sql) return;
    try {
      const entries = [sql, ...sqlHistory().filter((entry) => entry !== sql)].slice(0, SQL_HISTORY_SIZE);
      localStorage.setItem(SQL_HISTORY, JSON.stringify(entries));
    } catch {
      // Storage refused: no history.
    }
    showSqlHistory();
  };
  const sqlBox = () => document.querySelector('#sql-form textarea[name="sql"]');

  document.addEventListener('DOMContentLoaded', () => {
    apply(stored());
    showSqlHistory();
    enhance(document);
    document.body.addEventListener('htmx:load', (event) => enhance(event.target));
    document.body.addEventListener('htmx:sseMessage', (event) => {
      const rows = event.target;
      keepNewest(rows);
      showTimes(rows);
      labelCells(rows);
    });
    // The Requests view's chunks of summaries are made rows here, not swapped in as HTML.
    document.body.addEventListener('htmx:sseBeforeMessage', (event) => {
      if (event.detail?.type !== 'requests') return;
      event.preventDefault();
      drawLiveRows(event.target, JSON.parse(event.detail.data));
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

  // A query run (by its button, Ctrl+Enter or Enter in a field) goes into the history; capture, as htmx cancels the
  // submit event on the form.
  document.addEventListener(
    'submit',
    (event) => {
      if (event.target.id === 'sql-form') rememberSql(sqlBox()?.value.trim());
    },
    true,
  );

  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Enter' || !(event.ctrlKey || event.metaKey) || !event.target.matches?.('#sql-form textarea'))
      return;
    event.preventDefault();
    event.target.form.requestSubmit();
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
    if (event.target.closest?.('[data-time-toggle]')) {
      const next = TIME_ZONES[(TIME_ZONES.indexOf(storedZone()) + 1) % TIME_ZONES.length];
      try {
        localStorage.setItem('localplane-time', next);
      } catch {
        // Storage refused: the zone still applies to this page.
      }
      showTimes(document);
      redrawCharts();
      return;
    }
    const sqlAction = event.target.closest?.('[data-sql-insert], [data-sql-history], [data-sql-cancel]');
    if (sqlAction) {
      const box = sqlBox();
      if (sqlAction.dataset.sqlCancel !== undefined) htmx.trigger(box.form, 'htmx:abort');
      else if (sqlAction.dataset.sqlHistory !== undefined) box.value = sqlAction.dataset.sqlHistory;
      else box.setRangeText(sqlAction.dataset.sqlInsert, box.selectionStart, box.selectionEnd, 'end');
      if (sqlAction.dataset.sqlCancel === undefined) box.focus();
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
