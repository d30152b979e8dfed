//! The chart of the manager's memory against the number of PtahSchemas.

use std::path::Path;

use anyhow::Context;
use plotters::prelude::*;

/// One point: PtahSchemas, settled and peak RSS in MiB.
pub(super) struct Point {
    /// PtahSchemas in the cluster.
    pub(super) schemas: f64,
    /// Settled resident set, MiB.
    pub(super) settled: f64,
    /// Peak resident set, MiB.
    pub(super) peak: f64,
}

/// Draws `points` (at least one) with the goal line at `goal_mib`, as an SVG at `path`.
pub(super) fn draw(path: &Path, points: &[Point], goal_mib: f64) -> anyhow::Result<()> {
    let max_x = points.iter().map(|p| p.schemas).fold(1.0, f64::max) * 1.05;
    let max_y = points
        .iter()
        .map(|p| p.peak.max(p.settled))
        .fold(goal_mib, f64::max)
        * 1.15;
    let root = SVGBackend::new(path, (760, 420)).into_drawing_area();
    root.fill(&WHITE).context("drawing the chart background")?;
    let mut chart = ChartBuilder::on(&root)
        .caption("manager resident memory against PtahSchemas", ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(56)
        .build_cartesian_2d(0.0..max_x, 0.0..max_y)
        .context("laying out the chart")?;
    chart
        .configure_mesh()
        .x_desc("PtahSchemas (each with a Job in flight)")
        .y_desc("RSS, MiB")
        .draw()
        .context("drawing the axes")?;
    let series = |f: fn(&Point) -> f64| points.iter().map(move |p| (p.schemas, f(p))).collect::<Vec<_>>();
    chart
        .draw_series(LineSeries::new(series(|p| p.settled), BLUE.stroke_width(2)))
        .context("drawing settled RSS")?
        .label("settled RSS")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLUE.stroke_width(2)));
    chart
        .draw_series(
            series(|p| p.settled)
                .into_iter()
                .map(|c| Circle::new(c, 3, BLUE.filled())),
        )
        .context("drawing settled points")?;
    chart
        .draw_series(LineSeries::new(series(|p| p.peak), RED.stroke_width(1)))
        .context("drawing peak RSS")?
        .label("peak RSS")
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], RED));
    chart
        .draw_series(LineSeries::new(
            vec![(0.0, goal_mib), (max_x, goal_mib)],
            BLACK.mix(0.5).stroke_width(1),
        ))
        .context("drawing the goal")?
        .label(format!("goal: {goal_mib:.0} MiB settled"))
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], BLACK.mix(0.5)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK.mix(0.3))
        .draw()
        .context("drawing the legend")?;
    root.present().context("writing the chart")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chart_is_an_svg_with_both_series_and_the_goal() {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let path = dir.path().join("rss.svg");
        let points = [
            Point {
                schemas: 100.0,
                settled: 20.0,
                peak: 25.0,
            },
            Point {
                schemas: 1000.0,
                settled: 40.0,
                peak: 60.0,
            },
        ];
        draw(&path, &points, 28.0).expect("drawn");
        let svg = std::fs::read_to_string(&path).expect("written");
        assert!(svg.starts_with("<svg"), "{}", &svg[..svg.len().min(80)]);
        for text in ["settled RSS", "peak RSS", "goal: 28 MiB settled", "PtahSchemas"] {
            assert!(svg.contains(text), "the chart lacks {text:?}");
        }
        assert!(svg.matches("<polyline").count() >= 3, "three lines");
    }
}
