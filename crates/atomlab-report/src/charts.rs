//! The report's charts, drawn by plotters into SVG strings.
//!
//! Four shapes:
//! * [`line_chart`]: a figure against an ordinal x axis (thread counts,
//!   offered rates, percentiles, seconds), one line per series, each point
//!   with a min–max bar;
//! * [`dot_chart`]: one point with a min–max bar per labelled row, for a
//!   scenario measured at a single thread count (or a CPU pair);
//! * [`change_chart`]: relative changes with their intervals, a zero line
//!   and the ±threshold band;
//! * [`bar_chart`]: a bar per labelled row with its count written at its
//!   end (final states of a litmus test, verdicts of an audit).
//!
//! Plotters is built without its `ttf` feature, so it places text with a
//! fixed estimate of glyph widths and the SVG carries plain `<text>`
//! elements that the browser sets in its own sans-serif: nothing is read
//! from the system's fonts and nothing is embedded.

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use crate::html::tick;

/// Series colours (matplotlib's tab10, without its two palest).
pub(crate) const PALETTE: [RGBColor; 8] = [
    RGBColor(0x1f, 0x77, 0xb4),
    RGBColor(0xff, 0x7f, 0x0e),
    RGBColor(0x2c, 0xa0, 0x2c),
    RGBColor(0xd6, 0x27, 0x28),
    RGBColor(0x94, 0x67, 0xbd),
    RGBColor(0x8c, 0x56, 0x4b),
    RGBColor(0xe3, 0x77, 0xc2),
    RGBColor(0x17, 0xbe, 0xcf),
];

/// The colour of series `i`, as CSS.
pub(crate) fn css_color(i: usize) -> String {
    let RGBColor(r, g, b) = PALETTE[i % PALETTE.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// Verdict colours of the change chart.
const WORSE: RGBColor = RGBColor(0xc6, 0x28, 0x28);
const BETTER: RGBColor = RGBColor(0x2e, 0x7d, 0x32);
const SAME: RGBColor = RGBColor(0x61, 0x61, 0x61);
const NOISY: RGBColor = RGBColor(0xb2, 0x6a, 0x00);

/// The CSS colour of series `i` of a [`line_chart`] of `series`.
pub(crate) fn series_css_color(series: &[Series], i: usize) -> String {
    css_color(series.get(i).map_or(i, |s| s.color_index(i)))
}

/// Font sizes as plotters takes them; its SVG backend writes size / 1.24.
const LABEL: u32 = 15;
const DESC: u32 = 17;

/// One figure: the median and the spread over the runs.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Point {
    /// Index of its x label (line chart) or row (dot chart).
    pub x: usize,
    /// Median over the runs.
    pub median: f64,
    /// Smallest run.
    pub min: f64,
    /// Largest run.
    pub max: f64,
    /// Drawn hollow: data, but flagged (e.g. not contended as asked).
    pub hollow: bool,
}

/// A line of a [`line_chart`].
#[derive(Debug, Clone)]
pub(crate) struct Series {
    /// Its name in the legend.
    pub name: String,
    /// Drawn dashed (private counters, against solid shared ones).
    pub dashed: bool,
    /// Its colour's index in [`PALETTE`]; `None`: its own index among the
    /// series.
    pub color: Option<usize>,
    /// Its points, by x.
    pub points: Vec<Point>,
}

impl Series {
    /// The index in [`PALETTE`] of the `i`-th series' colour.
    pub(crate) fn color_index(&self, i: usize) -> usize {
        self.color.unwrap_or(i)
    }
}

/// How a [`Bar`] is coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    /// Something is wrong (a forbidden outcome observed, SIGILL on ARMv8.0).
    Bad,
    /// Worth a look.
    Warn,
    /// The palette's colour of this index.
    Plain(usize),
}

/// A row of a [`bar_chart`].
#[derive(Debug, Clone)]
pub(crate) struct Bar {
    /// Its label on the y axis.
    pub label: String,
    /// Its length (a count).
    pub value: f64,
    /// Its colour.
    pub tone: Tone,
}

/// A row of a [`change_chart`].
#[derive(Debug, Clone)]
pub(crate) struct ChangeBar {
    /// Its label on the y axis.
    pub label: String,
    /// Relative change, a fraction.
    pub change: f64,
    /// Interval for the change, fractions.
    pub low: f64,
    /// Upper end.
    pub high: f64,
    /// `worse`, `better`, `same` or `noisy`.
    pub tone: &'static str,
}

/// An f64 axis with a tick at each whole position `0..n` (the rows or the
/// thread counts), whose labels the chart's formatter supplies.
/// (plotters' `with_key_points` on an f64 range loses its formatter.)
struct Ordinal {
    inner: RangedCoordf64,
    ticks: Vec<f64>,
}

impl Ordinal {
    /// Positions `0..n` with half a step of room at either end (`lo`, `hi`
    /// extra), ticks at each.
    fn new(n: usize, lo: f64, hi: f64) -> Ordinal {
        Ordinal {
            inner: (-lo..n as f64 - 1.0 + hi).into(),
            ticks: (0..n).map(|i| i as f64).collect(),
        }
    }
}

impl Ranged for Ordinal {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.inner.range()
    }
}

/// `svg` with `role="img"` and `label` as its accessible name.
pub(crate) fn labelled(svg: &str, label: &str) -> String {
    match svg.strip_prefix("<svg ") {
        Some(rest) => format!(
            "<svg role=\"img\" aria-label=\"{}\" {rest}",
            crate::html::esc(label)
        ),
        None => svg.to_string(),
    }
}

type Result<T> = std::result::Result<T, String>;

fn err<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// A bar from `ends[0]` to `ends[1]` with a cap across each end, the caps
/// reaching `cap` (in data units) to either side: a min–max bar or an
/// interval.
fn whisker(
    ends: [(f64, f64); 2],
    cap: (f64, f64),
    style: ShapeStyle,
) -> [PathElement<(f64, f64)>; 3] {
    let capped = |(x, y): (f64, f64)| {
        PathElement::new(vec![(x - cap.0, y - cap.1), (x + cap.0, y + cap.1)], style)
    };
    [
        PathElement::new(vec![ends[0], ends[1]], style),
        capped(ends[0]),
        capped(ends[1]),
    ]
}

/// An upper end for a y axis from 0 that holds `max` with some room.
fn headroom(max: f64) -> f64 {
    if max.is_finite() && max > 0.0 {
        max * 1.12
    } else {
        1.0
    }
}

/// Width in pixels plotters' estimate gives `text` at `size`, plus a margin.
fn text_width(text: &str, size: u32) -> u32 {
    let em = f64::from(size) / 1.24 / 1.24;
    (em * 0.7 * text.chars().count() as f64).ceil() as u32 + 16
}

/// Lines of `series` against `x_labels`, evenly spaced (thread counts
/// 1, 2, 4, 8 get equal room), with min–max bars. Points of different
/// series at the same x are set slightly apart so their bars stay visible.
pub(crate) fn line_chart(
    x_labels: &[String],
    x_desc: &str,
    y_desc: &str,
    series: &[Series],
) -> Result<String> {
    let (w, h) = (820u32, 440u32);
    let n = x_labels.len().max(1);
    let ymax = headroom(
        series
            .iter()
            .flat_map(|s| &s.points)
            .map(|p| p.max.max(p.median))
            .fold(0.0, f64::max),
    );
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(86)
            .build_cartesian_2d(Ordinal::new(n, 0.5, 0.5), 0.0..ymax)
            .map_err(err)?;
        let fmt_x = |v: &f64| {
            x_labels
                .get(v.round().max(0.0) as usize)
                .cloned()
                .unwrap_or_default()
        };
        let fmt_y = |v: &f64| tick(*v);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
            .y_labels(8)
            .x_label_formatter(&fmt_x)
            .y_label_formatter(&fmt_y)
            .x_desc(x_desc)
            .y_desc(y_desc)
            .label_style(("sans-serif", LABEL))
            .axis_desc_style(("sans-serif", DESC))
            .draw()
            .map_err(err)?;
        let k = series.len().max(1) as f64;
        let spread = (0.3 / k).min(0.08);
        for (i, s) in series.iter().enumerate() {
            let color = PALETTE[s.color_index(i) % PALETTE.len()];
            let dx = (i as f64 - (k - 1.0) / 2.0) * spread;
            let at = |p: &Point| p.x as f64 + dx;
            let line = ShapeStyle {
                color: color.to_rgba(),
                filled: false,
                stroke_width: 2,
            };
            let pts: Vec<(f64, f64)> = s.points.iter().map(|p| (at(p), p.median)).collect();
            if s.dashed {
                chart
                    .draw_series(DashedLineSeries::new(pts, 7, 5, line))
                    .map_err(err)?;
            } else {
                chart.draw_series(LineSeries::new(pts, line)).map_err(err)?;
            }
            chart
                .draw_series(s.points.iter().flat_map(|p| {
                    whisker(
                        [(at(p), p.min), (at(p), p.max)],
                        (0.035, 0.0),
                        color.stroke_width(1),
                    )
                }))
                .map_err(err)?;
            chart
                .draw_series(s.points.iter().map(|p| {
                    let style = if p.hollow {
                        WHITE.filled()
                    } else {
                        color.filled()
                    };
                    Circle::new((at(p), p.median), 4, style)
                }))
                .map_err(err)?;
            chart
                .draw_series(
                    s.points
                        .iter()
                        .filter(|p| p.hollow)
                        .map(|p| Circle::new((at(p), p.median), 4, color.stroke_width(2))),
                )
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// One point with its min–max bar per row, rows top to bottom in the
/// order of `rows` (their labels on the y axis), the figure on x from 0.
/// A row's colour is its index's in [`PALETTE`].
pub(crate) fn dot_chart(rows: &[(String, Point)], x_desc: &str) -> Result<String> {
    let n = rows.len().max(1);
    let label_w = rows
        .iter()
        .map(|(l, _)| text_width(l, LABEL))
        .max()
        .unwrap_or(60)
        .clamp(60, 360);
    let (w, h) = (820u32, 96 + 30 * n as u32);
    let xmax = headroom(
        rows.iter()
            .map(|(_, p)| p.max.max(p.median))
            .fold(0.0, f64::max),
    );
    // Row i sits at y = n - 1 - i, so the first row is on top.
    let y_of = |i: usize| (n - 1 - i) as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(label_w)
            .build_cartesian_2d(0.0..xmax, Ordinal::new(n, 0.6, 0.6))
            .map_err(err)?;
        let fmt_y = |v: &f64| {
            let i = v.round();
            if i < 0.0 || i as usize >= n {
                return String::new();
            }
            rows.get(n - 1 - i as usize)
                .map(|(l, _)| l.clone())
                .unwrap_or_default()
        };
        let fmt_x = |v: &f64| tick(*v);
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
            .x_labels(8)
            .x_label_formatter(&fmt_x)
            .y_label_formatter(&fmt_y)
            .x_desc(x_desc)
            .label_style(("sans-serif", LABEL))
            .axis_desc_style(("sans-serif", DESC))
            .draw()
            .map_err(err)?;
        for (i, (_, p)) in rows.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            let y = y_of(i);
            chart
                .draw_series(whisker(
                    [(p.min, y), (p.max, y)],
                    (0.0, 0.18),
                    color.stroke_width(2),
                ))
                .map_err(err)?;
            let style = if p.hollow {
                color.stroke_width(2)
            } else {
                color.filled()
            };
            if p.hollow {
                chart
                    .draw_series(std::iter::once(Circle::new(
                        (p.median, y),
                        5,
                        WHITE.filled(),
                    )))
                    .map_err(err)?;
            }
            chart
                .draw_series(std::iter::once(Circle::new((p.median, y), 5, style)))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// A bar per row from 0 to its value, rows top to bottom in the order of
/// `bars` (their labels on the y axis), each with its count written at its
/// end: a bar of 3 beside one of 9000 is too short to see, its count is
/// not.
pub(crate) fn bar_chart(bars: &[Bar], x_desc: &str) -> Result<String> {
    let n = bars.len().max(1);
    let label_w = bars
        .iter()
        .map(|b| text_width(&b.label, LABEL))
        .max()
        .unwrap_or(60)
        .clamp(60, 420);
    let (w, h) = (820u32, 96 + 30 * n as u32);
    // Room at the end of the longest bar for its count.
    let xmax = headroom(
        bars.iter()
            .map(|b| b.value)
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max),
    ) * 1.08;
    let y_of = |i: usize| (n - 1 - i) as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(label_w)
            .build_cartesian_2d(0.0..xmax, Ordinal::new(n, 0.6, 0.6))
            .map_err(err)?;
        let fmt_y = |v: &f64| {
            let i = v.round();
            if i < 0.0 || i as usize >= n {
                return String::new();
            }
            bars.get(n - 1 - i as usize)
                .map(|b| b.label.clone())
                .unwrap_or_default()
        };
        // Counts: whole numbers on the axis, no 0.2 of a binary.
        let fmt_x = |v: &f64| {
            if (v - v.round()).abs() < 1e-9 {
                tick(*v)
            } else {
                String::new()
            }
        };
        let whole = (xmax.floor() as usize + 1).clamp(2, 8);
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(WHITE)
            .bold_line_style(RGBColor(0xe4, 0xe4, 0xe4))
            .x_labels(whole)
            .x_label_formatter(&fmt_x)
            .y_label_formatter(&fmt_y)
            .x_desc(x_desc)
            .label_style(("sans-serif", LABEL))
            .axis_desc_style(("sans-serif", DESC))
            .draw()
            .map_err(err)?;
        let beside = TextStyle::from(("sans-serif", LABEL).into_font()).pos(
            plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Left,
                plotters::style::text_anchor::VPos::Center,
            ),
        );
        for (i, b) in bars.iter().enumerate() {
            let color = match b.tone {
                Tone::Bad => WORSE,
                Tone::Warn => NOISY,
                Tone::Plain(k) => PALETTE[k % PALETTE.len()],
            };
            let y = y_of(i);
            let value = if b.value.is_finite() { b.value } else { 0.0 };
            // Any count above zero shows as a sliver at least.
            let end = if value > 0.0 {
                value.max(xmax * 0.004)
            } else {
                0.0
            };
            if end > 0.0 {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(0.0, y - 0.3), (end, y + 0.3)],
                        color.filled(),
                    )))
                    .map_err(err)?;
            }
            chart
                .draw_series(std::iter::once(Text::new(
                    crate::html::count(value),
                    (end + xmax * 0.01, y),
                    beside.clone(),
                )))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// Relative changes (in %) with their intervals as horizontal whiskers, a
/// zero line and a shaded ±`threshold` band; rows top to bottom.
pub(crate) fn change_chart(bars: &[ChangeBar], threshold: f64) -> Result<String> {
    let n = bars.len().max(1);
    let label_w = bars
        .iter()
        .map(|b| text_width(&b.label, LABEL))
        .max()
        .unwrap_or(60)
        .clamp(60, 420);
    let (w, h) = (900u32, 100 + 24 * n as u32);
    let t = threshold.abs() * 100.0;
    let reach = bars
        .iter()
        .flat_map(|b| [b.change, b.low, b.high])
        .filter(|v| v.is_finite())
        .map(|v| v.abs() * 100.0)
        .fold(t, f64::max);
    let xr = if reach > 0.0 { reach * 1.15 } else { 1.0 };
    let y_of = |i: usize| (n - 1 - i) as f64;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(14)
            .x_label_area_size(56)
            .y_label_area_size(label_w)
            .build_cartesian_2d(-xr..xr, Ordinal::new(n, 0.6, 0.6))
            .map_err(err)?;
        let fmt_y = |v: &f64| {
            let i = v.round();
            if i < 0.0 || i as usize >= n {
                return String::new();
            }
            bars.get(n - 1 - i as usize)
                .map(|b| b.label.clone())
                .unwrap_or_default()
        };
        let fmt_x = |v: &f64| match tick(*v).as_str() {
            "0" => "0%".to_string(),
            t if *v > 0.0 => format!("+{t}%"),
            t => format!("{t}%"),
        };
        // The band first, so everything else is drawn over it.
        let band = chart.plotting_area();
        let y_range = chart.y_range();
        band.draw(&Rectangle::new(
            [(-t, y_range.start), (t, y_range.end)],
            RGBColor(0xd6, 0xe4, 0xf5).filled(),
        ))
        .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .light_line_style(TRANSPARENT)
            .bold_line_style(RGBColor(0xdd, 0xdd, 0xdd))
            .x_labels(9)
            .x_label_formatter(&fmt_x)
            .y_label_formatter(&fmt_y)
            .x_desc("change, % (B vs A); shaded: ±threshold; whiskers: confidence interval")
            .label_style(("sans-serif", LABEL))
            .axis_desc_style(("sans-serif", DESC))
            .draw()
            .map_err(err)?;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(0.0, y_range.start), (0.0, y_range.end)],
                BLACK.stroke_width(1),
            )))
            .map_err(err)?;
        for (i, b) in bars.iter().enumerate() {
            let color = match b.tone {
                "worse" => WORSE,
                "better" => BETTER,
                "noisy" => NOISY,
                _ => SAME,
            };
            let y = y_of(i);
            let (lo, hi, c) = (b.low * 100.0, b.high * 100.0, b.change * 100.0);
            if lo.is_finite() && hi.is_finite() {
                chart
                    .draw_series(whisker(
                        [(lo.clamp(-xr, xr), y), (hi.clamp(-xr, xr), y)],
                        (0.0, 0.18),
                        color.stroke_width(2),
                    ))
                    .map_err(err)?;
            }
            if c.is_finite() {
                chart
                    .draw_series(std::iter::once(Rectangle::new(
                        [(c - xr * 0.006, y - 0.28), (c + xr * 0.006, y + 0.28)],
                        color.filled(),
                    )))
                    .map_err(err)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The legend of a [`line_chart`] of `series`: a swatch in each line's
/// colour and dash, and its name.
pub(crate) fn legend(series: &[Series]) -> String {
    let mut out = String::from("<ul class=\"legend\">");
    for (i, s) in series.iter().enumerate() {
        out.push_str(&format!(
            "<li><span class=\"swatch\" style=\"border-top: 3px {} {}\"></span>{}</li>",
            if s.dashed { "dashed" } else { "solid" },
            series_css_color(series, i),
            crate::html::esc(&s.name)
        ));
    }
    out.push_str("</ul>\n");
    out
}

/// A chart in its `<figure class="chart" data-chart="NAME">`: the SVG (or
/// why it could not be drawn) named `label` for screen readers, the legend
/// (HTML, may be empty) and the caption (HTML, escaped by the caller).
pub(crate) fn figure(
    name: &str,
    svg: Result<String>,
    label: &str,
    legend: &str,
    caption: &str,
) -> String {
    let mut out = format!("<figure class=\"chart\" data-chart=\"{name}\">\n");
    match svg {
        Ok(svg) => out.push_str(&labelled(&svg, label)),
        Err(e) => out.push_str(&format!(
            "<p class=\"bad\">chart not drawn: {}</p>",
            crate::html::esc(&e)
        )),
    }
    out.push('\n');
    out.push_str(legend);
    out.push_str(&format!("<figcaption>{caption}.</figcaption>\n</figure>\n"));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: usize, m: f64) -> Point {
        Point {
            x,
            median: m,
            min: m * 0.9,
            max: m * 1.1,
            hollow: x == 1,
        }
    }

    #[test]
    fn line_chart_has_lines_bars_and_labels() {
        let s = vec![
            Series {
                name: "a".into(),
                dashed: false,
                color: None,
                points: vec![p(0, 2.0), p(1, 6.0)],
            },
            Series {
                name: "b".into(),
                dashed: true,
                color: Some(5),
                points: vec![p(0, 3.0)],
            },
        ];
        let svg = line_chart(&["1".into(), "2".into()], "threads", "ns per op", &s).unwrap();
        assert!(svg.starts_with("<svg"));
        assert!(svg.contains("<polyline") || svg.contains("<path"));
        assert!(svg.contains("<circle"));
        assert!(svg.contains(">\nthreads\n<") || svg.contains("threads"));
        assert!(svg.contains("ns per op"));
        // b's own colour, not its index's.
        assert!(svg.contains(&css_color(5).to_uppercase()), "{svg}");
    }

    #[test]
    fn a_bar_chart_has_a_bar_and_a_count_per_row() {
        let bars = [
            Bar {
                label: "0:EAX=0; 1:EAX=0;".into(),
                value: 3.0,
                tone: Tone::Bad,
            },
            Bar {
                label: "0:EAX=1; 1:EAX=0;".into(),
                value: 9048.0,
                tone: Tone::Plain(0),
            },
            Bar {
                label: "never seen".into(),
                value: 0.0,
                tone: Tone::Plain(1),
            },
        ];
        let svg = bar_chart(&bars, "times seen").unwrap();
        let frame = bar_chart(&[], "times seen")
            .unwrap()
            .matches("<rect")
            .count();
        // The two bars of counts above zero, over the frame's rectangles.
        assert_eq!(svg.matches("<rect").count(), frame + 2, "{svg}");
        assert!(svg.contains(&css_color(0).to_uppercase()), "{svg}");
        for text in ["3", "9048", "0", "times seen", "never seen"] {
            let text = format!(">\n{text}\n</text>");
            assert!(svg.contains(&text), "{text:?} in {svg}");
        }
    }

    #[test]
    fn dot_and_change_charts_draw() {
        let svg = dot_chart(&[("x".into(), p(0, 1.0)), ("y".into(), p(1, 2.0))], "ns").unwrap();
        assert!(svg.contains("<circle"));
        let bars = [ChangeBar {
            label: "#1 <b>".into(),
            change: 0.2,
            low: 0.1,
            high: 0.3,
            tone: "worse",
        }];
        let svg = change_chart(&bars, 0.02).unwrap();
        assert!(svg.contains("<rect"));
        assert!(svg.contains("&lt;b&gt;"), "plotters escapes text");
        assert!(svg.contains("change, %"));
    }
}
