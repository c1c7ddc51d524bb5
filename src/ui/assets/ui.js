// The dashboard's few behaviours that are not htmx attributes: the theme, copying, charts.
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

  /** A uPlot chart from a figure's data-chart: {"x": [epoch seconds], "series": [{"label", "values"}]}. */
  const drawChart = (figure) => {
    if (figure.dataset.drawn || typeof uPlot === 'undefined') return;
    figure.dataset.drawn = 'true';
    const spec = JSON.parse(figure.dataset.chart);
    const style = getComputedStyle(document.documentElement);
    const colours = ['--ok', '--accent', '--warn', '--bad'].map((name) => style.getPropertyValue(name).trim());
    const axis = { stroke: style.getPropertyValue('--fg-soft').trim(), grid: { stroke: style.getPropertyValue('--line').trim() } };
    new uPlot(
      {
        width: Math.max(figure.clientWidth, 300),
        height: 200,
        scales: { x: { time: spec.time !== false } },
        axes: [axis, axis],
        series: [{ label: spec.xLabel ?? 'time' }, ...spec.series.map((series, index) => ({ label: series.label, stroke: colours[index % colours.length], width: 2 }))],
      },
      [spec.x, ...spec.series.map((series) => series.values)],
      figure,
    );
  };

  const enhance = (root) => {
    root.querySelectorAll?.('[data-chart]').forEach(drawChart);
  };

  document.addEventListener('DOMContentLoaded', () => {
    apply(stored());
    enhance(document);
    document.body.addEventListener('htmx:load', (event) => enhance(event.target));
  });

  document.addEventListener('click', (event) => {
    const toggle = event.target.closest?.('[data-theme-toggle]');
    if (toggle) {
      const next = THEMES[(THEMES.indexOf(stored()) + 1) % THEMES.length];
      try {
        localStorage.setItem('localplane-theme', next);
      } catch {}
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
