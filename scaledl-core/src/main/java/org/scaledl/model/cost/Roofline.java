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

    /**
     * What no kernel of a layer beats in one pass, s: its FLOPs at the device's peak in the precision (the matrix
     * units' for a product or convolution; none for a convolution, which may do fewer multiplications than its direct
     * form: Winograd, FFT), and its bytes (counted in 4-byte elements, a product's taken in the precision's) that
     * cannot stay in the L2 at the memory bandwidth.
     */
    public static double hardwareFloorSeconds(org.scaledl.workload.LayerFeatures f, org.scaledl.workload.Device d,
            org.scaledl.workload.Precision p, boolean bwd) {
        double flops = bwd ? f.flopsBwd() : f.flopsFwd();
        double bytes = (bwd ? f.bytesBwd() : f.bytesFwd()) * p.activationBytes() / 4.0;
        boolean matrix = f.family() == org.scaledl.workload.OpFamily.DENSE
                || f.family() == org.scaledl.workload.OpFamily.CONV;
        double compute = f.family() == org.scaledl.workload.OpFamily.CONV ? 0
                : flops / d.peakFlopsPerSecond(p, matrix);
        return Math.max(compute, Math.max(0, bytes - d.l2Bytes()) / d.bytesPerSecond());
    }
}
