package org.scaledl.doe;

import java.util.Locale;

/** The checks every design takes its rows through: one way to refuse what no determinant can be taken of. */
final class Rows {
    /**
     * The largest magnitude a design row's value may have: the information matrix sums products of two values, and
     * beyond about 1e154 those overflow a double (a determinant of Infinity or NaN, which no choice of rows means).
     */
    static final double MAX_ABS = 1e150;

    private Rows() {
    }

    /**
     * A deep copy of rows, each of {@code p} finite values of magnitude at most {@link #MAX_ABS} ({@code p} below 0:
     * the first row's length, which must be positive).
     *
     * @param what what to call the rows in a message ("row", "fixed row", "measured row")
     * @throws IllegalArgumentException naming the row, for null, ragged, non-finite or too large rows
     */
    static double[][] checkedCopy(double[][] rows, String what, int p) {
        if (rows == null) {
            throw new NullPointerException(what + "s");
        }
        int width = p >= 0 ? p : rows.length > 0 && rows[0] != null ? rows[0].length : 0;
        if (p < 0 && rows.length > 0 && width == 0) {
            throw new IllegalArgumentException("candidates have no columns");
        }
        double[][] out = new double[rows.length][];
        for (int i = 0; i < rows.length; i++) {
            if (rows[i] == null || rows[i].length != width) {
                throw new IllegalArgumentException(String.format(Locale.ROOT, "%s %d has %s values, expected %d", what,
                        i, rows[i] == null ? "no" : String.valueOf(rows[i].length), width));
            }
            for (double v : rows[i]) {
                if (!Double.isFinite(v)) {
                    throw new IllegalArgumentException(String.format(Locale.ROOT, "%s %d has a non-finite value", what,
                            i));
                }
                if (Math.abs(v) > MAX_ABS) {
                    throw new IllegalArgumentException(String.format(Locale.ROOT, "%s %d has a value of %s: beyond %s"
                            + " the information matrix overflows; rescale the columns", what, i, v, MAX_ABS));
                }
            }
            out[i] = rows[i].clone();
        }
        return out;
    }

    /** The ridge, finite and at least 0. */
    static double ridge(double value) {
        if (!(value >= 0 && Double.isFinite(value))) {
            throw new IllegalArgumentException(String.format(Locale.ROOT, "ridge must be >= 0: %s", value));
        }
        return value;
    }
}
