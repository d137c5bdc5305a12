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
 * @param nvlinkDomain    GPUs one NVLink (or Infinity Fabric) domain joins at the intra-node link's bandwidth: the
 *                        node's GPUs on an HGX server, 72 on a GB200 or GB300 NVL72 rack of 18 trays of 4; at most
 *                        the node on PCIe
 */
public record Topology(int gpusPerNode, Link link, double intraNodeGBps, double interNodeGbps,
        double interNodeLatencyUs, boolean assumed, int nvlinkDomain) {

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
        String problem = problem(gpusPerNode, link, intraNodeGBps, interNodeGbps, interNodeLatencyUs, nvlinkDomain);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /** What is wrong with the figures, or null: each message is built only when its check fails. */
    private static String problem(int gpusPerNode, Link link, double intraNodeGBps, double interNodeGbps,
            double interNodeLatencyUs, int nvlinkDomain) {
        if (!(gpusPerNode > 0 && gpusPerNode <= MAX_GPUS_PER_NODE)) {
            return "GPUs per node must be in 1.." + MAX_GPUS_PER_NODE + ": " + gpusPerNode;
        }
        if (!(nvlinkDomain > 0 && nvlinkDomain <= MAX_DOMAIN)) {
            return "the NVLink domain must be in 1.." + MAX_DOMAIN + " GPUs: " + nvlinkDomain;
        }
        if (link == null) {
            return "link is missing";
        }
        if (link != Link.PCIE && nvlinkDomain < gpusPerNode) {
            // an NVLink domain joins whole nodes (a bridged pair's cards are NVLink point to point in their node; an
            // NVL72 rack stays the domain where a node is taken to be of another size, with())
            return domainProblem(nvlinkDomain, gpusPerNode).orElseThrow();
        }
        if (link == Link.PCIE && nvlinkDomain > gpusPerNode) {
            return "a PCIe server's GPUs share no NVLink domain beyond their node (of " + gpusPerNode + "): "
                    + nvlinkDomain;
        }
        if (!(Double.isFinite(intraNodeGBps) && intraNodeGBps >= MIN_GBPS && intraNodeGBps <= MAX_GBPS)) {
            return "intra-node bandwidth must be in [" + MIN_GBPS + ", " + MAX_GBPS + "] GB/s: " + intraNodeGBps;
        }
        // a network shared by a node's groups (each group's share: the slowest network given, over a node's most
        // GPUs) is a topology too: the floor is that share, the one a user gives is MIN_GBPS
        if (!(Double.isFinite(interNodeGbps) && interNodeGbps >= MIN_GBPS / MAX_GPUS_PER_NODE
                && interNodeGbps <= MAX_GBPS * 8)) {
            return "inter-node bandwidth must be in [" + MIN_GBPS / MAX_GPUS_PER_NODE + ", " + MAX_GBPS * 8
                    + "] Gb/s (a network a user gives at least " + MIN_GBPS + "; a node's group gets a share of it): "
                    + interNodeGbps;
        }
        if (!(Double.isFinite(interNodeLatencyUs) && interNodeLatencyUs >= 0 && interNodeLatencyUs <= 1e6)) {
            return "network latency must be in [0, 1e6] us: " + interNodeLatencyUs;
        }
        return null;
    }

    /**
     * What is wrong with an NVLink domain of {@code domain} GPUs over nodes (or trays) of {@code node}, or empty: a
     * domain joins whole nodes (an NVL72 rack 18 trays of 4). The one rule by which an option, a table's column and
     * a catalog's row are checked.
     */
    public static Optional<String> domainProblem(int domain, int node) {
        if (node < 1) {
            return Optional.of("GPUs per node must be positive: " + node);
        }
        if (domain < node) {
            return Optional.of("an NVLink domain of " + domain + " GPUs is smaller than a node of " + node);
        }
        return domain % node != 0 ? Optional.of("an NVLink domain of " + domain + " GPUs is no whole number of nodes "
                + "of " + node + " (a domain joins whole nodes or trays: 72 GPUs of 18 trays of 4)") : Optional.empty();
    }

    /** The most GPUs a node (or tray) may hold. */
    public static final int MAX_GPUS_PER_NODE = 1 << 10;
    /** The most GPUs one NVLink domain may join. */
    public static final int MAX_DOMAIN = 1 << 16;
    /**
     * The slowest link or network a user describes, GB/s or Gb/s (a dial-up modem is not a GPU fabric); a topology
     * holds a network down to this over a node's most GPUs, the share of it each of a node's groups gets.
     */
    public static final double MIN_GBPS = 0.001;
    /** The fastest link described, GB/s per GPU (a hundred times NVLink 5). */
    public static final double MAX_GBPS = 1e5;

    /** A topology whose NVLink domain is its node (every server but the rack-scale ones). */
    public Topology(int gpusPerNode, Link link, double intraNodeGBps, double interNodeGbps, double interNodeLatencyUs,
            boolean assumed) {
        this(gpusPerNode, link, intraNodeGBps, interNodeGbps, interNodeLatencyUs, assumed, gpusPerNode);
    }

    /**
     * A given topology with the default network latency, its NVLink domain the node (an HGX or DGX server; for a
     * rack-scale system such as a GB200 NVL72, {@link #of(int, Link, double, double, int)} or
     * {@link #assumedFor(Device)} with {@link #with(Optional, Optional, Optional)}).
     */
    public static Topology of(int gpusPerNode, Link link, double intraNodeGBps, double interNodeGbps) {
        checkGivenNetwork(interNodeGbps);
        return new Topology(gpusPerNode, link, intraNodeGBps, interNodeGbps, DEFAULT_LATENCY_US, false);
    }

    /**
     * A given topology with the default network latency and an NVLink domain of {@code nvlinkDomain} GPUs, whole
     * nodes: {@code Topology.of(4, Link.NVSWITCH, 900, 1600, 72)} is a GB200 NVL72 rack of 18 trays of 4 GPUs.
     *
     * @throws IllegalArgumentException for a domain smaller than the node or no whole number of nodes, or a PCIe
     *         server's beyond its node
     */
    public static Topology of(int gpusPerNode, Link link, double intraNodeGBps, double interNodeGbps,
            int nvlinkDomain) {
        checkGivenNetwork(interNodeGbps);
        // (a PCIe server's domain beyond its node is refused as every topology's is)
        if (link != Link.PCIE) {
            domainProblem(nvlinkDomain, gpusPerNode).ifPresent(p -> {
                throw new IllegalArgumentException(p);
            });
        }
        return new Topology(gpusPerNode, link, intraNodeGBps, interNodeGbps, DEFAULT_LATENCY_US, false, nvlinkDomain);
    }

    /**
     * Refuses a node's network a caller gives outside [{@link #MIN_GBPS}, 8 · {@link #MAX_GBPS}] Gb/s (a topology's
     * own floor is lower: a node's group's share of one).
     */
    private static void checkGivenNetwork(double gbps) {
        Checks.argument(Double.isFinite(gbps) && gbps >= MIN_GBPS && gbps <= MAX_GBPS * 8,
                "a node's network bandwidth must be in [%s, %s] Gb/s: %s", MIN_GBPS, MAX_GBPS * 8, gbps);
    }

    /** The network per GPU assumed for a GPU with a fast link whose catalog row gives none, Gb/s. */
    public static final double DEFAULT_NETWORK_GBPS_PER_GPU = 200;
    /** The network per node assumed for PCIe servers whose catalog row gives none, Gb/s. */
    public static final double DEFAULT_PCIE_NODE_GBPS = 100;

    /**
     * The topology of the standard system of a device, from its catalog row ({@link Device#platform()}): its GPUs
     * per node (or tray) and NVLink domain, its link ({@code NVLink3} and later with a domain beyond a pair:
     * NVSwitch; older NVLink: point to point; Infinity Fabric; {@code none}: PCIe at its generation's x16
     * bandwidth), and its network per GPU. What the row does not give is the common server: eight GPUs, NVLink
     * point to point where a link bandwidth is described, 200 Gb/s per GPU with a fast link, 100 Gb/s per node on
     * PCIe. Marked {@link #assumed()}: predictions say so in a warning.
     */
    public static Topology assumedFor(Device d) {
        java.util.Objects.requireNonNull(d, "d");
        Device.Platform pf = d.platform();
        int gpus = nodeGpus(pf);
        Optional<Link> fast = fastLink(d);
        if (fast.isPresent()) {
            double perGpu = pf.networkGbpsPerGpu() > 0 ? pf.networkGbpsPerGpu() : DEFAULT_NETWORK_GBPS_PER_GPU;
            int domain = pf.nvlinkDomain() > 0 ? Math.max(pf.nvlinkDomain(), gpus) : gpus;
            return new Topology(gpus, fast.get(), d.linkGBps(), gpus * perGpu, DEFAULT_LATENCY_US, true, domain);
        }
        double pcie = d.pcieGBps() > 0 ? d.pcieGBps() : 15.75;
        double network = pf.networkGbpsPerGpu() > 0 ? gpus * pf.networkGbpsPerGpu() : DEFAULT_PCIE_NODE_GBPS;
        return new Topology(gpus, Link.PCIE, pcie, network, DEFAULT_LATENCY_US, true, gpus);
    }

    /** The GPUs of a platform's node: its own count, or 8 where it describes none. */
    private static int nodeGpus(Device.Platform pf) {
        return pf.gpusPerNode() > 0 ? pf.gpusPerNode() : 8;
    }

    /** The device's own GPU-to-GPU link, from its catalog row's link kind (or its bandwidth alone), if it has one. */
    static Optional<Link> fastLink(Device d) {
        if (d.linkGBps() <= 0) {
            return Optional.empty();
        }
        String kind = d.platform().linkKind().toLowerCase(Locale.ROOT);
        if (kind.startsWith("infinityfabric")) {
            return Optional.of(Link.INFINITY_FABRIC);
        }
        if (kind.equals("none")) {
            return Optional.empty();
        }
        // NVLink 3 and later reach every GPU of a domain through NVSwitch (a pair of bridged cards: point to point)
        int generation = kind.startsWith("nvlink") && kind.length() > 6 && Character.isDigit(kind.charAt(6))
                ? kind.charAt(6) - '0' : 0;
        // a domain not described is the node's, as assumedFor takes it
        int domain = d.platform().nvlinkDomain() > 0 ? d.platform().nvlinkDomain() : nodeGpus(d.platform());
        boolean switched = generation >= 3 && domain > 2;
        return Optional.of(switched ? Link.NVSWITCH : Link.NVLINK);
    }

    /**
     * This topology with some parts replaced (the others kept): GPUs per node, the network's bandwidth and the NVLink
     * domain, as a user gives them on top of the device's default ({@code --gpus-per-node}, {@code --inter-node-gbps},
     * {@code --nvlink-domain}). A domain not given stays the device's where the node keeps its size or the domain is
     * a rack's (NVL72: the rack, or the node where that is larger), else becomes the node; a network not given keeps
     * its bandwidth per GPU (a node of other size has as many adapters as GPUs, as the catalog's network is per GPU;
     * a PCIe server keeps its node's). A topology with the node and the network given is no longer assumed.
     *
     * @throws IllegalArgumentException for a domain smaller than the node, or a domain (given, or the device's rack
     *         kept) that is no whole number of nodes
     */
    public Topology with(Optional<Integer> gpus, Optional<Double> networkGbps, Optional<Integer> domain) {
        java.util.Objects.requireNonNull(gpus, "gpus");
        java.util.Objects.requireNonNull(networkGbps, "networkGbps");
        java.util.Objects.requireNonNull(domain, "domain");
        // what the caller gives, checked as given (a node's size, a network a user gives at least MIN_GBPS)
        gpus.ifPresent(n -> Checks.argument(n >= 1 && n <= MAX_GPUS_PER_NODE, "GPUs a node must be in [1, %s]: %s",
                MAX_GPUS_PER_NODE, n));
        networkGbps.ifPresent(Topology::checkGivenNetwork);
        int node = gpus.orElse(gpusPerNode);
        // a rack-scale domain (NVL72) stays the rack whatever a node is taken to be; a node-sized one follows the node
        boolean rack = nvlinkDomain > gpusPerNode;
        int d = domain.orElse(gpus.isPresent() && gpus.get() != gpusPerNode && !rack ? node
                : Math.max(nvlinkDomain, node));
        if (link != Link.PCIE) {
            // a domain joins whole nodes, given or kept (an NVL72 rack stays over nodes of another size that make it
            // up; over nodes that cannot, it is refused as the same domain given is, saying which to give)
            Optional<String> problem = domainProblem(d, node);
            if (problem.isPresent()) {
                throw new IllegalArgumentException(problem.get() + (domain.isPresent() || d < node ? ""
                        : " (the NVLink domain kept from the topology adjusted, a device's standard system's unless "
                        + "given: give the domain of these nodes, e.g. " + largestWholeNodes(d, node) + ", or " + node
                        + " for none across nodes)"));
            }
        } else if (domain.isPresent() && domain.get() != node) {
            // (it was dropped without a word)
            throw new IllegalArgumentException("a PCIe server's GPUs share no NVLink domain beyond their node: an "
                    + "NVLink domain of " + domain.get() + " on nodes of " + node + " PCIe GPUs");
        }
        // PCIe servers' default network is the node's (one adapter), not per GPU
        double network = networkGbps.orElse(link == Link.PCIE || node == gpusPerNode ? interNodeGbps
                : interNodeGbps / gpusPerNode * node);
        Checks.argument(network <= MAX_GBPS * 8, "a node of %s GPUs at %s Gb/s each is beyond any network (at most %s "
                + "Gb/s a node): give the network's bandwidth", node, interNodeGbps / gpusPerNode, MAX_GBPS * 8);
        return new Topology(node, link, intraNodeGBps, network, interNodeLatencyUs,
                assumed && (gpus.isEmpty() || networkGbps.isEmpty()), link == Link.PCIE ? node : d);
    }

    /** The most GPUs, at most {@code domain}, that whole nodes of {@code node} make (at least one node). */
    private static int largestWholeNodes(int domain, int node) {
        return Math.max(node, domain / node * node);
    }

    /** This topology with the node's size and network replaced (see {@link #with(Optional, Optional, Optional)}). */
    public Topology with(Optional<Integer> gpus, Optional<Double> networkGbps) {
        return with(gpus, networkGbps, Optional.empty());
    }

    /**
     * The topology the collectives see: the NVLink domain as one node (its GPUs at the link's bandwidth, its network
     * all of its GPUs' adapters together, at most the fastest network a topology holds, {@code 8 · MAX_GBPS}: a
     * domain of 18 trays at 51,200 Gb/s each is 921,600 Gb/s, beyond any fabric, and taken as that fastest). The
     * topology itself where the domain is the node.
     */
    public Topology scaleUp() {
        if (nvlinkDomain <= gpusPerNode) {
            return this;
        }
        return new Topology(nvlinkDomain, link, intraNodeGBps,
                Math.min(MAX_GBPS * 8, interNodeGbps / gpusPerNode * nvlinkDomain), interNodeLatencyUs, assumed,
                nvlinkDomain);
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

    /**
     * A one-line description: {@code 8 GPUs per node, nvswitch 300 GB/s, 1600 Gb/s between nodes (a node's, 200 a
     * GPU)} (and {@code , NVLink domain of 72} where the domain spans nodes).
     */
    public String describe() {
        if (gpusPerNode == 1) {
            // (a node of one GPU has no link inside it to describe)
            return String.format(Locale.ROOT, "1 GPU per node, %s Gb/s between nodes%s", trim(interNodeGbps),
                    nvlinkDomain > 1 ? ", NVLink domain of " + nvlinkDomain : "");
        }
        return String.format(Locale.ROOT, "%d GPUs per node, %s %s GB/s, %s Gb/s between nodes%s%s", gpusPerNode,
                link.label(), trim(intraNodeGBps), trim(interNodeGbps), " (a node's, "
                        + trim(Math.round(interNodeGbps / gpusPerNode * 100) / 100.0) + " a GPU)",
                nvlinkDomain > gpusPerNode ? ", NVLink domain of " + nvlinkDomain : "");
    }

    private static String trim(double v) {
        return v == Math.rint(v) ? Long.toString((long) v) : Double.toString(v);
    }
}
