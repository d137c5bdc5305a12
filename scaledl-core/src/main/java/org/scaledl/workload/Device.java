package org.scaledl.workload;

import com.google.common.base.Preconditions;
import java.util.Objects;
import java.util.OptionalDouble;

/**
 * An accelerator described by its data-sheet figures. Runtime models use ratios of work to these figures
 * (FLOPs / peak, bytes / bandwidth, thread blocks / compute units), so a model fitted on some devices can predict
 * another one from its description alone.
 *
 * <pre>{@code
 * Device a100 = new Device("NVIDIA A100-PCIE-40GB", 40, 1555, 108, 1410, 19492, 19492, 40);
 * double ridge = a100.ridgeFlopsPerByte(true);   // FLOPs per byte where matrix kernels turn compute-bound
 * }</pre>
 *
 * @param name                device name (as reported by the framework, e.g. {@code torch.cuda.get_device_name()})
 * @param memoryGB            device memory, GB
 * @param memoryBandwidthGBps peak memory bandwidth, GB/s
 * @param computeUnits        streaming multiprocessors (NVIDIA) or compute units (AMD)
 * @param clockMHz            boost clock, MHz
 * @param peakMatrixGflops    FP32 peak for dense contractions (matrix cores where the vendor uses them for FP32), GFLOP/s
 * @param peakVectorGflops    FP32 peak of the vector units, GFLOP/s
 * @param l2MB                last-level on-chip cache, MB
 * @param linkGBps            device-to-device link bandwidth per direction (NVLink, Infinity Fabric), GB/s; 0 when
 *                            not described (see {@link #link()})
 */
public record Device(String name, double memoryGB, double memoryBandwidthGBps, int computeUnits, double clockMHz,
        double peakMatrixGflops, double peakVectorGflops, double l2MB, double linkGBps) {

    /** Validates: every figure finite and positive ({@code linkGBps} may be 0). */
    public Device {
        Preconditions.checkArgument(Double.isFinite(linkGBps) && linkGBps >= 0,
                "device %s: link bandwidth must be finite and >= 0", name);
        Objects.requireNonNull(name, "name");
        Preconditions.checkArgument(!name.isBlank(), "device name is blank");
        for (double v : new double[] {memoryGB, memoryBandwidthGBps, clockMHz, peakMatrixGflops, peakVectorGflops,
                l2MB}) {
            Preconditions.checkArgument(Double.isFinite(v) && v > 0, "device %s: figures must be finite and positive",
                    name);
        }
        Preconditions.checkArgument(computeUnits > 0, "device %s: compute units must be positive", name);
    }

    /** A device without a described link. */
    public Device(String name, double memoryGB, double memoryBandwidthGBps, int computeUnits, double clockMHz,
            double peakMatrixGflops, double peakVectorGflops, double l2MB) {
        this(name, memoryGB, memoryBandwidthGBps, computeUnits, clockMHz, peakMatrixGflops, peakVectorGflops, l2MB, 0);
    }

    /** The device-to-device link bandwidth per direction, GB/s, if described. */
    public OptionalDouble link() {
        return linkGBps > 0 ? OptionalDouble.of(linkGBps) : OptionalDouble.empty();
    }

    /** A copy with a link bandwidth (GB/s per direction). */
    public Device withLinkGBps(double value) {
        return new Device(name, memoryGB, memoryBandwidthGBps, computeUnits, clockMHz, peakMatrixGflops,
                peakVectorGflops, l2MB, value);
    }

    /** Peak FP32 FLOP/s for matrix ({@code true}) or vector work. */
    public double peakFlopsPerSecond(boolean matrix) {
        return (matrix ? peakMatrixGflops : peakVectorGflops) * 1e9;
    }

    /** Peak memory bandwidth in bytes per second. */
    public double bytesPerSecond() {
        return memoryBandwidthGBps * 1e9;
    }

    /** The roofline ridge point: FLOPs per byte above which work is compute-bound. */
    public double ridgeFlopsPerByte(boolean matrix) {
        return peakFlopsPerSecond(matrix) / bytesPerSecond();
    }

    /** L2 size in bytes. */
    public double l2Bytes() {
        return l2MB * 1024 * 1024;
    }

    /** A lookup key: the name lower-cased with everything but letters and digits removed. */
    public static String key(String deviceName) {
        return deviceName.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9]", "");
    }
}
