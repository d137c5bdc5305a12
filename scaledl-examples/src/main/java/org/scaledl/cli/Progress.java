package org.scaledl.cli;

import java.io.PrintStream;
import java.util.Locale;

/**
 * Progress of a long command on stderr: a bar with an estimate of the time left on a terminal, a plain line every
 * tenth of the work (and at least every 10 s) otherwise, nothing with {@code --quiet}. The result itself goes to
 * stdout, so progress never mixes with what a script reads.
 */
final class Progress {
    private final String task;
    private final PrintStream err;
    private final boolean quiet;
    private final boolean terminal;
    private final long start = System.nanoTime();
    private long lastLine = System.nanoTime();
    private int lastDecile = -1;

    private Progress(String task, boolean quiet, PrintStream err, boolean terminal) {
        this.task = task;
        this.quiet = quiet;
        this.err = err;
        this.terminal = terminal;
    }

    /** Progress of a task on this process's stderr. */
    static Progress of(String task, boolean quiet) {
        return new Progress(task, quiet, System.err, System.console() != null);
    }

    /** {@code done} of {@code total} steps are done; {@code what} names the last one. */
    synchronized void update(int done, int total, String what) {
        if (quiet || total <= 0) {
            return;
        }
        double elapsed = (System.nanoTime() - start) / 1e9;
        double left = done == 0 ? Double.NaN : elapsed / done * (total - done);
        if (terminal) {
            int width = 30;
            int filled = (int) Math.round(width * (double) done / total);
            err.printf(Locale.ROOT, "\r%s [%s%s] %d/%d %s%s", task, "#".repeat(filled), " ".repeat(width - filled),
                    done, total, Double.isNaN(left) ? "" : "ETA " + duration(left), done == total ? "\n" : "");
            err.flush();
            return;
        }
        int decile = 10 * done / total;
        boolean due = (System.nanoTime() - lastLine) / 1e9 >= 10;
        if (decile != lastDecile || due || done == total) {
            lastDecile = decile;
            lastLine = System.nanoTime();
            err.printf(Locale.ROOT, "%s: %d/%d (%s), %s elapsed%s%n", task, done, total, what, duration(elapsed),
                    Double.isNaN(left) || done == total ? "" : ", about " + duration(left) + " left");
        }
    }

    static String duration(double seconds) {
        if (seconds < 60) {
            return String.format(Locale.ROOT, "%.0f s", seconds);
        }
        return String.format(Locale.ROOT, "%d min %02d s", (long) seconds / 60, (long) seconds % 60);
    }
}
