package org.scaledl.io;

import java.util.Arrays;

/**
 * The median of measured times, for the readers of this package (the model's own quantiles live a layer above it).
 */
final class Medians {
    private Medians() {
    }

    /** The median of some values (NaN for none; the array is left as it is). */
    static double of(double[] x) {
        if (x.length == 0) {
            return Double.NaN;
        }
        double[] s = x.clone();
        Arrays.sort(s);
        int k = s.length;
        return k % 2 == 1 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
    }
}
