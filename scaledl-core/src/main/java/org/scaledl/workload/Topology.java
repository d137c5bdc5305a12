package org.scaledl.workload;

import java.util.Locale;
import java.util.Optional;
import org.scaledl.Checks;

/**
 * The machines a job's GPUs sit in: how many GPUs a node holds, the link between the GPUs of a node (NVLink or
 * NVSwitch, Infinity Fabric, or PCIe), and the network between nodes. Every collective of a parallel job runs over
 * it: inside a node over the intra-node link, across nodes over the network (all of a node's network adapters
 * together, {@link #interNodeGbps()}, in gigabits per second and one direction, as NICs are sold: eight 200 Gb/s
 * InfiniBand HDR adapters make 1,600).
 *
 * <pre>{@code
 * Topology dgx = Topology.of(8, Topology.Link.NVSWITCH, 300, 1600);   // DGX A100: NVSwitch, 8 x HDR
 * Topology t = Topology.assumedFor(device);                          // from the device's form factor
 * }</pre>
 *
 * @param gpusPerNode     GPUs in one node (positive)
 * @param link            what connects the GPUs of a node
 * @param intraNodeGBps   the intra-node link's bandwidth per GPU and direction, GB/s (positive)
 * @param interNodeGbps   the network bandwidth of one node, all adapters together, one direction, Gb/s (positive)
 * @param interNodeLatencyUs one network message's latency, µs (≥ 0)
 * @param assumed         true when this topology was derived from the device's description rather than given
 */
public record Topology(int gpusPerNode, Link link, double intraNodeGBps, double interNodeGbps,
        double interNodeLatencyUs, boolean assumed) {

    /** The link between the GPUs of one node. */
    public enum Link {
        /** NVLink through NVSwitch: every pair of GPUs at the full per-GPU bandwidth (DGX A100, H100, H200). */
        NVSWITCH,
        /** NVLink point to point (DGX-1's hybrid cube mesh, bridges): rings at the per-GPU bandwidth. */
        NVLINK,
        /** AMD Infinity Fabric between the GPUs of a node. */
        INFINITY_FABRIC,
        /** PCIe through the host: the GPUs share the switch and the CPU's root complex. */
        PCIE;

        /** Lower-case label. */
        public String label() {
            return name().toLowerCase(Locale.ROOT).replace('_', '-');
        }
    }

    /** The network latency assumed when none is given, µs (InfiniBand through one switch level). */
    public static final double DEFAULT_LATENCY_US = 5;

    /** Validates. */
    public Topology {
        Checks.argument(gpusPerNode > 0, "GPUs per node must be positive: %s", gpusPerNode);
        Checks.argument(link != null, "link is missing");
        Checks.argument(Double.isFinite(intraNodeGBps) && intraNodeGBps > 0,
                "intra-node bandwidth must be finite and positive: %s GB/s", intraNodeGBps);
        Checks.argument(Double.isFinite(interNodeGbps) && interNodeGbps > 0,
                "inter-node bandwidth must be finite and positive: %s Gb/s", interNodeGbps);
        Checks.argument(Double.isFinite(interNodeLatencyUs) && interNodeLatencyUs >= 0,
                "network latency must be finite and >= 0: %s us", interNodeLatencyUs);
    }

    /** A given topology with the default network latency. */
    public static Topology of(int gpusPerNode, Link link, double intraNodeGBps, double interNodeGbps) {
        return new Topology(gpusPerNode, link, intraNodeGBps, interNodeGbps, DEFAULT_LATENCY_US, false);
    }

    /**
     * The topology of the standard server for a device's form factor: an SXM or OAM part sits eight to a node on its
     * NVLink (NVSwitch from the A100 on) or Infinity Fabric at the catalog's link bandwidth, with one 200 Gb/s adapter
     * per GPU (1,600 Gb/s per node); a PCIe card sits eight to a node on PCIe at its generation's x16 bandwidth, with
     * 100 Gb/s per node. Marked {@link #assumed()}: predictions say so in a warning.
     *
     * @throws IllegalArgumentException for a device without any link bandwidth (neither link nor PCIe)
     */
    public static Topology assumedFor(Device d) {
        Optional<Link> fast = fastLink(d);
        if (fast.isPresent()) {
            return new Topology(8, fast.get(), d.linkGBps(), 8 * 200, DEFAULT_LATENCY_US, true);
        }
        double pcie = d.pcieGBps() > 0 ? d.pcieGBps() : 15.75;
        return new Topology(8, Link.PCIE, pcie, 100, DEFAULT_LATENCY_US, true);
    }

    /** The device's own GPU-to-GPU link, if its description has one. */
    static Optional<Link> fastLink(Device d) {
        if (d.linkGBps() <= 0) {
            return Optional.empty();
        }
        String n = d.name().toLowerCase(Locale.ROOT);
        if (n.contains("amd") || n.contains("mi2") || n.contains("mi3") || n.contains("mi1")) {
            return Optional.of(Link.INFINITY_FABRIC);
        }
        boolean switched = n.contains("a100") || n.contains("h100") || n.contains("h200") || n.contains("b200");
        return Optional.of(switched ? Link.NVSWITCH : Link.NVLINK);
    }

    /**
     * This topology with some parts replaced (the others kept): GPUs per node and the network's bandwidth, as a user
     * gives them on top of the device's default ({@code --gpus-per-node}, {@code --inter-node-gbps}). A topology
     * with both given is no longer assumed.
     */
    public Topology with(Optional<Integer> gpus, Optional<Double> networkGbps) {
        return new Topology(gpus.orElse(gpusPerNode), link, intraNodeGBps, networkGbps.orElse(interNodeGbps),
                interNodeLatencyUs, assumed && (gpus.isEmpty() || networkGbps.isEmpty()));
    }

    /** The network bandwidth of one node, bytes per second. */
    public double interNodeBytesPerSecond() {
        return interNodeGbps * 1e9 / 8;
    }

    /** The network bandwidth each GPU of a node has when all of them send at once, bytes per second. */
    public double interNodeBytesPerSecondPerGpu() {
        return interNodeBytesPerSecond() / gpusPerNode;
    }

    /** The intra-node link's bandwidth per GPU and direction, bytes per second. */
    public double intraNodeBytesPerSecond() {
        return intraNodeGBps * 1e9;
    }

    /** A one-line description: {@code 8 GPUs per node, nvswitch 300 GB/s, 1600 Gb/s between nodes}. */
    public String describe() {
        return String.format(Locale.ROOT, "%d GPUs per node, %s %s GB/s, %s Gb/s between nodes", gpusPerNode,
                link.label(), trim(intraNodeGBps), trim(interNodeGbps));
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
