package org.scaledl.model.cost;

/**
 * The roofline bound, defined once: work that needs {@code F} FLOPs and {@code B} bytes of memory traffic on a
 * machine of peak {@code P} FLOP/s and bandwidth {@code W} bytes/s takes at least {@code max(F / P, B / W)}. The host
 * baseline ({@link Baselines#roofline()}) fits the machine's ratio {@code P / W}; the device model scales this bound
 * (with wave quantisation) by a learned efficiency, and its baseline by a median one.
 */
public final class Roofline {
    private Roofline() {
    }

    /**
     * The bound, in the time unit of the rates (seconds for FLOP/s and bytes/s).
     *
     * @param flops          FLOPs
     * @param bytes          bytes moved
     * @param flopsPerSecond peak compute rate
     * @param bytesPerSecond peak memory bandwidth
     */
    public static double time(double flops, double bytes, double flopsPerSecond, double bytesPerSecond) {
        return Math.max(flops / flopsPerSecond, bytes / bytesPerSecond);
    }
}
