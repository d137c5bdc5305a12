package org.scaledl.cli;

import java.util.Optional;
import org.scaledl.workload.Device;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Recompute;
import org.scaledl.workload.Topology;
import picocli.CommandLine.Option;

/**
 * The options of a job on GPUs that {@code predict} and {@code layouts} share: precision, the machines (GPUs per node
 * and the network between them; the intra-node link comes from the device's description) and, for transformers,
 * recomputation and sequence parallelism.
 */
final class ClusterOptions {
    @Option(names = "--precision", description = "fp32, tf32, fp16 or bf16 (fp16/bf16: mixed precision; default "
            + "fp32)", converter = PrecisionConverter.class)
    Precision precision;

    @Option(names = "--gpus-per-node", description = "GPUs in one node (default: the device's standard server, 8)")
    Integer gpusPerNode;

    @Option(names = "--inter-node-gbps", description = "Network bandwidth of one node, all adapters together, "
            + "Gb/s (default: 200 per GPU for SXM/OAM parts, 100 per node for PCIe cards)")
    Double interNodeGbps;

    @Option(names = "--recompute", description = "Activation recomputation of transformer training: none, "
            + "selective or full (default none)", converter = RecomputeConverter.class)
    Recompute recompute;

    @Option(names = "--sequence-parallel", description = "Megatron's sequence parallelism (with --tensor > 1)")
    boolean sequenceParallel;

    /** The precision, FP32 when not given. */
    Precision precision() {
        return precision == null ? Precision.FP32 : precision;
    }

    /** The recomputation, none when not given. */
    Recompute recompute() {
        return recompute == null ? Recompute.NONE : recompute;
    }

    /**
     * The topology on a device: the device's standard server with what the options give, or empty when they give
     * nothing (the prediction then says it assumed the standard server).
     */
    Optional<Topology> topology(Device d, Integer gpus, Double network) {
        Integer g = gpus != null ? gpus : gpusPerNode;
        Double n = network != null ? network : interNodeGbps;
        if (g == null && n == null) {
            return Optional.empty();
        }
        if (g != null && g <= 0) {
            throw new IllegalArgumentException("--gpus-per-node must be positive, got " + g);
        }
        if (n != null && !(n > 0 && Double.isFinite(n))) {
            throw new IllegalArgumentException("--inter-node-gbps must be a positive number, got " + n);
        }
        return Optional.of(Topology.assumedFor(d).with(Optional.ofNullable(g), Optional.ofNullable(n)));
    }

    /** Parses {@code --precision}. */
    static final class PrecisionConverter implements picocli.CommandLine.ITypeConverter<Precision> {
        @Override
        public Precision convert(String value) {
            try {
                return Precision.parse(value);
            } catch (org.scaledl.InvalidInputException e) {
                throw new picocli.CommandLine.TypeConversionException(e.detail());
            }
        }
    }

    /** Parses {@code --recompute}. */
    static final class RecomputeConverter implements picocli.CommandLine.ITypeConverter<Recompute> {
        @Override
        public Recompute convert(String value) {
            try {
                return Recompute.parse(value);
            } catch (org.scaledl.InvalidInputException e) {
                throw new picocli.CommandLine.TypeConversionException(e.detail());
            }
        }
    }
}
