package org.scaledl.cli;

import java.util.List;
import java.util.Locale;

/**
 * Small line charts as SVG, without a plotting library: panels with a log-2 x axis (GPU counts, batch sizes), a
 * linear y axis from zero, lines with a shaded interval, and measured points drawn last (on top).
 */
final class SvgChart {
    private SvgChart() {
    }

    /** A line: y at each x, optionally with an interval {@code [lo, hi]} drawn as a band. */
    record Series(String name, String colour, double[] x, double[] y, double[] lo, double[] hi) {
    }

    /** Points (measurements), drawn over the lines. */
    record Points(String name, String colour, double[] x, double[] y) {
    }

    /** One panel at {@code (ox, oy)} of {@code w x h} pixels. */
    static String panel(int ox, int oy, int w, int h, String title, String xLabel, String yLabel,
            List<Series> lines, List<Points> points) {
        int left = 64;
        int right = 16;
        int top = 30;
        int bottom = 44;
        double x0 = Double.POSITIVE_INFINITY;
        double x1 = Double.NEGATIVE_INFINITY;
        double yMax = 0;
        java.util.TreeSet<Double> ticks = new java.util.TreeSet<>();
        for (Series s : lines) {
            for (int i = 0; i < s.x().length; i++) {
                x0 = Math.min(x0, s.x()[i]);
                x1 = Math.max(x1, s.x()[i]);
                ticks.add(s.x()[i]);
                yMax = Math.max(yMax, s.hi() != null ? s.hi()[i] : s.y()[i]);
            }
        }
        for (Points p : points) {
            for (int i = 0; i < p.x().length; i++) {
                yMax = Math.max(yMax, p.y()[i]);
            }
        }
        double lx0 = log2(x0) - 0.1;
        double lx1 = Math.max(log2(x1), lx0 + 0.2) + 0.1;
        double ym = niceCeiling(yMax * 1.05);
        int pw = w - left - right;
        int ph = h - top - bottom;
        java.util.function.DoubleUnaryOperator px = x -> ox + left + (log2(x) - lx0) / (lx1 - lx0) * pw;
        java.util.function.DoubleUnaryOperator py = y -> oy + top + ph - y / ym * ph;
        StringBuilder sb = new StringBuilder();
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">%s"
                + "</text>%n", ox + left + pw / 2, oy + 18, Reports.escape(title)));
        for (int t = 0; t <= 4; t++) {
            double v = ym * t / 4;
            double y = py.applyAsDouble(v);
            sb.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                    + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>%n", ox + left, y, ox + left + pw, y,
                    ox + left - 6, y + 4, number(v)));
        }
        for (double t : ticks) {
            double x = px.applyAsDouble(t);
            sb.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#eee\"/>"
                    + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n", x, oy + top, x, oy + top + ph,
                    x, oy + top + ph + 16, number(t)));
        }
        sb.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
                + "stroke=\"#999\"/>%n", ox + left, oy + top, pw, ph));
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>%n",
                ox + left + pw / 2, oy + h - 8, Reports.escape(xLabel)));
        int yl = oy + top + ph / 2;
        sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" transform=\"rotate(-90 %d %d)\" "
                + "text-anchor=\"middle\">%s</text>%n", ox + 14, yl, ox + 14, yl, Reports.escape(yLabel)));
        int legend = 0;
        for (Series s : lines) {
            if (s.lo() != null) {
                StringBuilder band = new StringBuilder();
                for (int i = 0; i < s.x().length; i++) {
                    band.append(String.format(Locale.ROOT, "%.1f,%.1f ", px.applyAsDouble(s.x()[i]),
                            py.applyAsDouble(s.hi()[i])));
                }
                for (int i = s.x().length - 1; i >= 0; i--) {
                    band.append(String.format(Locale.ROOT, "%.1f,%.1f ", px.applyAsDouble(s.x()[i]),
                            py.applyAsDouble(s.lo()[i])));
                }
                sb.append(String.format(Locale.ROOT, "<polygon points=\"%s\" fill=\"%s\" fill-opacity=\"0.18\" "
                        + "stroke=\"none\"/>%n", band, s.colour()));
            }
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < s.x().length; i++) {
                line.append(String.format(Locale.ROOT, "%.1f,%.1f ", px.applyAsDouble(s.x()[i]),
                        py.applyAsDouble(s.y()[i])));
            }
            sb.append(String.format(Locale.ROOT, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" "
                    + "stroke-width=\"2\"/>%n", line, s.colour()));
            sb.append(legend(ox + left + 8, oy + top + 14 + 16 * legend++, s.colour(), s.name(), false));
        }
        for (Points p : points) {
            for (int i = 0; i < p.x().length; i++) {
                sb.append(String.format(Locale.ROOT, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" "
                        + "stroke=\"white\"/>%n", px.applyAsDouble(p.x()[i]), py.applyAsDouble(p.y()[i]),
                        p.colour()));
            }
            if (p.x().length > 0) {
                sb.append(legend(ox + left + 8, oy + top + 14 + 16 * legend++, p.colour(), p.name(), true));
            }
        }
        return sb.toString();
    }

    /** A whole document of panels. */
    static String document(int w, int h, String title, List<String> panels) {
        // a title wider than the page is cut at a space into lines (about 7 pixels a character at 13 px)
        int perLine = Math.max(20, w / 7);
        List<String> lines = new java.util.ArrayList<>();
        String rest = title;
        while (rest.length() > perLine && lines.size() < 2) {
            int cut = rest.lastIndexOf(' ', perLine);
            cut = cut <= 0 ? perLine : cut;
            lines.add(rest.substring(0, cut));
            rest = rest.substring(cut).strip();
        }
        lines.add(rest.length() > perLine ? rest.substring(0, perLine - 3) + "..." : rest);
        int top = 16 * (lines.size() - 1);
        StringBuilder sb = new StringBuilder(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" "
                + "width=\"%d\" height=\"%d\" font-family=\"sans-serif\" font-size=\"11\"><rect width=\"%d\" "
                + "height=\"%d\" fill=\"white\"/>%n", w, h + top, w, h + top));
        for (int i = 0; i < lines.size(); i++) {
            sb.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" font-size=\"13\">%s"
                    + "</text>%n", w / 2, 18 + 16 * i, Reports.escape(lines.get(i))));
        }
        sb.append(String.format(Locale.ROOT, "<g transform=\"translate(0,%d)\">%n", top));
        panels.forEach(sb::append);
        return sb.append("</g>\n</svg>\n").toString();
    }

    private static String legend(int x, int y, String colour, String name, boolean point) {
        String mark = point ? String.format(Locale.ROOT, "<circle cx=\"%d\" cy=\"%d\" r=\"4\" fill=\"%s\"/>", x + 7,
                y - 4, colour) : String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"14\" height=\"4\" "
                + "fill=\"%s\"/>", x, y - 6, colour);
        return String.format(Locale.ROOT, "%s<text x=\"%d\" y=\"%d\">%s</text>%n", mark, x + 20, y,
                Reports.escape(name));
    }

    private static double log2(double x) {
        return Math.log(x) / Math.log(2);
    }

    /** 1, 2 or 5 times a power of ten at or above {@code v}. */
    static double niceCeiling(double v) {
        if (!(v > 0)) {
            return 1;
        }
        double p = Math.pow(10, Math.floor(Math.log10(v)));
        for (double m : new double[] {1, 2, 2.5, 5, 10}) {
            if (m * p >= v) {
                return m * p;
            }
        }
        return 10 * p;
    }

    private static String number(double v) {
        if (v == Math.rint(v) && Math.abs(v) < 1e7) {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return String.format(Locale.ROOT, Math.abs(v) >= 100 ? "%.0f" : Math.abs(v) >= 1 ? "%.1f" : "%.2g", v);
    }
}
