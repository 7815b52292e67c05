import { html } from "htm/preact";
import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import uPlot from "uplot";
import { shortDay } from "./usage-series.js";

// One uPlot chart over the days of the usage page's range: bars (stacked when the caller passes
// running sums, drawn largest first so each smaller bar covers the one below) or a line. Colours
// are read from CSS variables when drawn, and the chart is drawn again when the system's colour
// scheme changes; it follows its box's width (ResizeObserver). A canvas says nothing to a screen
// reader: every chart has its numbers in a table beside it (`children`).

export interface ChartSeries {
  label: string;
  /** A CSS custom property holding the colour (`--usage-input`). */
  colorVar: string;
  /** What is drawn, one per day (running sums for a stacked chart; null leaves a gap). */
  values: Array<number | null>;
  /** What the legend shows at the cursor when not `values` (a stacked layer's own numbers). */
  shown?: Array<number | null>;
}

export interface UsageChartProps {
  /** The chart's heading and accessible name. */
  title: string;
  /** `YYYY-MM-DD`, oldest first: the x axis. */
  days: string[];
  series: ChartSeries[];
  kind: "bars" | "line";
  /** A value as the legend shows it. */
  format: (value: number) => string;
  /** A value as the y axis labels it (shorter), `step` apart from the next label. */
  axisFormat?: (value: number, step: number) => string;
  /** A fixed y range (a ratio's 0..1); otherwise from 0 to a little over the largest value. */
  yMax?: number;
  children?: ComponentChildren;
}

const HEIGHT = 220;
const MIN_WIDTH = 200;

/** Whether the system asks for dark colours, following its changes. */
function useDarkScheme(): boolean {
  const query = "(prefers-color-scheme: dark)";
  const [dark, setDark] = useState(() => matchMedia(query).matches);
  useEffect(() => {
    const mq = matchMedia(query);
    const onChange = () => setDark(mq.matches);
    mq.addEventListener("change", onChange);
    return () => mq.removeEventListener("change", onChange);
  }, []);
  return dark;
}

export function UsageChart(props: UsageChartProps) {
  const box = useRef<HTMLDivElement>(null);
  const dark = useDarkScheme();
  const { days, series, kind, format, axisFormat = format, yMax } = props;
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const css = getComputedStyle(el);
    const color = (name: string) => css.getPropertyValue(name).trim() || "#888888";
    const text = color("--fg-soft");
    const grid = color("--border");
    const width = () => Math.max(el.clientWidth, MIN_WIDTH);
    const bars = uPlot.paths.bars?.({ size: [0.7, 48], gap: 1 });
    const opts: uPlot.Options = {
      width: width(),
      height: HEIGHT,
      scales: {
        x: { time: false, range: () => [-0.5, days.length - 0.5] },
        y: {
          range: (_u, _min, max) => [0, yMax ?? (max > 0 ? max * 1.1 : 1)],
        },
      },
      axes: [
        {
          stroke: text,
          grid: { show: false },
          ticks: { stroke: grid },
          space: 44,
          incrs: [1, 2, 7, 14, 28, 56],
          values: (_u, splits) =>
            splits.map((i) => (Number.isInteger(i) && days[i] ? shortDay(days[i]) : "")),
        },
        {
          stroke: text,
          grid: { stroke: grid, width: 1 },
          ticks: { stroke: grid },
          size: 64,
          values: (_u, splits) => {
            const step = splits.length > 1 ? Math.abs((splits[1] ?? 0) - (splits[0] ?? 0)) : 1;
            return splits.map((v) => axisFormat(v, step));
          },
        },
      ],
      series: [
        { label: "Day", value: (_u, i) => (i === null ? "" : (days[i] ?? "")) },
        ...series.map((s): uPlot.Series => {
          const c = color(s.colorVar);
          const shown = s.shown ?? s.values;
          return {
            label: s.label,
            stroke: c,
            // A line joins the days that have a value (a ratio has none without requests).
            ...(kind === "bars"
              ? { fill: c, width: 0, paths: bars }
              : { width: 2, spanGaps: true }),
            points: { show: kind === "line", size: days.length > 31 ? 4 : 6 },
            value: (_u, _v, _si, i) => {
              const v = i === null ? null : shown[i];
              return v === null || v === undefined ? "–" : format(v);
            },
          };
        }),
      ],
      cursor: { drag: { x: false, y: false } },
    };
    const chart = new uPlot(
      opts,
      [days.map((_, i) => i), ...series.map((s) => s.values)] as uPlot.AlignedData,
      el,
    );
    const resize = new ResizeObserver(() => {
      if (chart.width !== width()) chart.setSize({ width: width(), height: HEIGHT });
    });
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [days, series, kind, format, axisFormat, yMax, dark]);
  return html`
    <section class="usage-chart card" aria-label=${props.title}>
      <h2>${props.title}</h2>
      <div class="chart-box" ref=${box} aria-hidden="true"></div>
      ${props.children}
    </section>
  `;
}
