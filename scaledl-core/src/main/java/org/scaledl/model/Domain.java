package org.scaledl.model;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.scaledl.InvalidInputException;
import org.scaledl.features.FeatureExtractor;
import org.scaledl.graph.Coverage;
import org.scaledl.graph.GraphCache;
import org.scaledl.graph.Layer;
import org.scaledl.graph.ModelGraph;
import org.scaledl.model.file.Fields;
import org.scaledl.workload.Device;
import org.scaledl.workload.LayerFeatures;
import org.scaledl.workload.OpFamily;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * What a predictor's training data covered, so that a prediction can say where it leaves it: per device, the
 * ranges of batch, world size and threads and the phases measured; the operator types and families of the training
 * graphs, and the families of operators measured alone (kernel benchmarks, profiled nodes); per family the range of
 * a layer's forward FLOPs, bytes and arithmetic intensity; the range of graph sizes; the tensor and pipeline degrees
 * seen; and whether the fit could cross-validate itself. It travels with the
 * predictor and its file.
 *
 * <pre>{@code
 * Domain d = predictor.domain();
 * d.devices().get("").maxBatch();      // the host's largest training batch
 * List<PredictionWarning> w = d.check(workload, prediction);
 * }</pre>
 *
 * @param devices        ranges per device name ({@code ""} for host measurements without a device)
 * @param operators      operator types of the training graphs
 * @param families       operator families that executed in training
 * @param layers         per family, the ranges of its layers' features
 * @param minLayers      fewest layers of a training graph (0 when only operators were measured)
 * @param maxLayers      most layers of a training graph
 * @param tensorDegrees  tensor-parallel degrees of the training runs
 * @param pipelineDegrees pipeline degrees of the training runs
 * @param crossValidated whether the fit measured its own error on held-out groups
 * @param measuredFamilies families with operators measured alone: an operator type of such a family is predicted
 *                 from those measurements, so it is not warned of when no training graph had it
 * @param precisions the precisions of the training runs and operators ({@link Precision#label()}); empty in files
 *                 written before they were recorded (then nothing is checked)
 * @param loraRanks  the LoRA ranks of the training runs (0: every weight trained); empty in files written before
 *                   they were recorded (then nothing is checked)
 */
public record Domain(Map<String, Ranges> devices, SortedSet<String> operators, Set<OpFamily> families,
        Map<OpFamily, LayerRanges> layers, int minLayers, int maxLayers, SortedSet<Integer> tensorDegrees,
        SortedSet<Integer> pipelineDegrees, boolean crossValidated, Set<OpFamily> measuredFamilies,
        SortedSet<String> precisions, SortedSet<Integer> loraRanks) {
    private static final com.fasterxml.jackson.databind.node.JsonNodeFactory JSON =
            com.fasterxml.jackson.databind.node.JsonNodeFactory.instance;

    /** Copies. */
    public Domain {
        devices = Collections.unmodifiableMap(new LinkedHashMap<>(new TreeMap<>(devices)));
        operators = Collections.unmodifiableSortedSet(new TreeSet<>(operators));
        families = families.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(families));
        layers = layers.isEmpty() ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(new EnumMap<>(layers)));
        tensorDegrees = Collections.unmodifiableSortedSet(new TreeSet<>(tensorDegrees));
        pipelineDegrees = Collections.unmodifiableSortedSet(new TreeSet<>(pipelineDegrees));
        measuredFamilies = measuredFamilies.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(measuredFamilies));
        precisions = Collections.unmodifiableSortedSet(new TreeSet<>(precisions));
        loraRanks = Collections.unmodifiableSortedSet(new TreeSet<>(loraRanks));
    }

    /** A domain that records no LoRA ranks (as a file written before they were): LoRA jobs are not checked. */
    public Domain(Map<String, Ranges> devices, SortedSet<String> operators, Set<OpFamily> families,
            Map<OpFamily, LayerRanges> layers, int minLayers, int maxLayers, SortedSet<Integer> tensorDegrees,
            SortedSet<Integer> pipelineDegrees, boolean crossValidated, Set<OpFamily> measuredFamilies,
            SortedSet<String> precisions) {
        this(devices, operators, families, layers, minLayers, maxLayers, tensorDegrees, pipelineDegrees,
                crossValidated, measuredFamilies, precisions, new TreeSet<>());
    }

    /**
     * The workload settings measured on one device.
     *
     * @param minBatch   smallest batch
     * @param maxBatch   largest batch
     * @param minWorld   smallest world size
     * @param maxWorld   largest world size
     * @param minThreads fewest threads
     * @param maxThreads most threads
     * @param phases     phases measured
     */
    public record Ranges(int minBatch, int maxBatch, int minWorld, int maxWorld, int minThreads, int maxThreads,
            Set<Phase> phases) {
        /** Copies. */
        public Ranges {
            phases = phases.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(phases));
        }
    }

    /**
     * The features one family's layers had in training (forward, at the batches measured).
     *
     * @param minFlops     fewest forward FLOPs of a layer
     * @param maxFlops     most forward FLOPs
     * @param minBytes     fewest forward bytes
     * @param maxBytes     most forward bytes
     * @param minIntensity lowest arithmetic intensity (FLOPs per byte)
     * @param maxIntensity highest arithmetic intensity
     */
    public record LayerRanges(double minFlops, double maxFlops, double minBytes, double maxBytes, double minIntensity,
            double maxIntensity) {
        LayerRanges with(LayerFeatures f) {
            return new LayerRanges(Math.min(minFlops, f.flopsFwd()), Math.max(maxFlops, f.flopsFwd()),
                    Math.min(minBytes, f.bytesFwd()), Math.max(maxBytes, f.bytesFwd()),
                    Math.min(minIntensity, f.arithmeticIntensity()), Math.max(maxIntensity, f.arithmeticIntensity()));
        }

        static LayerRanges of(LayerFeatures f) {
            return new LayerRanges(f.flopsFwd(), f.flopsFwd(), f.bytesFwd(), f.bytesFwd(), f.arithmeticIntensity(),
                    f.arithmeticIntensity());
        }

        /** Whether a layer lies outside these ranges (by more than rounding). */
        boolean outside(LayerFeatures f) {
            double tol = 1e-9;
            return f.flopsFwd() > maxFlops * (1 + tol) || f.flopsFwd() < minFlops * (1 - tol)
                    || f.bytesFwd() > maxBytes * (1 + tol) || f.bytesFwd() < minBytes * (1 - tol)
                    || f.arithmeticIntensity() > maxIntensity * (1 + tol)
                    || f.arithmeticIntensity() < minIntensity * (1 - tol);
        }
    }

    /** Collects a domain. */
    static final class Collector {
        private final Map<String, int[]> ranges = new TreeMap<>();
        private final Map<String, Set<Phase>> phases = new TreeMap<>();
        private final SortedSet<String> operators = new TreeSet<>();
        private final Set<OpFamily> families = EnumSet.noneOf(OpFamily.class);
        private final Set<OpFamily> measuredFamilies = EnumSet.noneOf(OpFamily.class);
        private final Map<OpFamily, LayerRanges> layers = new EnumMap<>(OpFamily.class);
        private final SortedSet<Integer> tensor = new TreeSet<>();
        private final SortedSet<Integer> pipeline = new TreeSet<>();
        private final Map<ModelGraph, Set<Long>> seen = new HashMap<>();
        private final Set<String> operatorDevices = new TreeSet<>();
        private final SortedSet<String> precisions = new TreeSet<>();
        private final SortedSet<Integer> lora = new TreeSet<>();
        private int minLayers = Integer.MAX_VALUE;
        private int maxLayers = 0;

        Collector samples(List<Sample> samples) {
            for (Sample s : samples) {
                Workload w = s.workload();
                String device = w.device().map(Device::name).orElse("");
                int[] r = ranges.computeIfAbsent(device, k -> new int[] {Integer.MAX_VALUE, 0, Integer.MAX_VALUE, 0,
                    Integer.MAX_VALUE, 0});
                r[0] = Math.min(r[0], w.batch());
                r[1] = Math.max(r[1], w.batch());
                r[2] = Math.min(r[2], w.worldSize());
                r[3] = Math.max(r[3], w.worldSize());
                r[4] = Math.min(r[4], w.threads());
                r[5] = Math.max(r[5], w.threads());
                phases.computeIfAbsent(device, k -> EnumSet.noneOf(Phase.class)).add(w.phase());
                precisions.add(w.precision().label());
                lora.add(w.loraRank());
                tensor.add(w.parallelism().tensor());
                pipeline.add(w.parallelism().pipeline());
                ModelGraph g = w.graph();
                minLayers = Math.min(minLayers, g.size());
                maxLayers = Math.max(maxLayers, g.size());
                long key = (long) w.batch() << 1 | (w.phase() == Phase.TRAIN ? 1 : 0);
                if (seen.computeIfAbsent(g, k -> new java.util.HashSet<>()).add(key)) {
                    for (Layer l : g.layers()) {
                        operators.add(l.opType());
                    }
                    for (LayerFeatures f : FeatureExtractor.of(g).extract(w.batch(), Phase.INFER)) {
                        layer(f);
                    }
                }
            }
            return this;
        }

        Collector operators(List<OpMeasurement> measured) {
            for (OpMeasurement m : measured) {
                if (!m.backward()) {
                    layer(m.features());
                }
                if (m.features().executes()) {
                    measuredFamilies.add(m.features().family());
                }
                operatorDevices.add(m.device().name());
                precisions.add(m.precision().label());
            }
            return this;
        }

        private void layer(LayerFeatures f) {
            if (!f.executes()) {
                return;
            }
            families.add(f.family());
            layers.merge(f.family(), LayerRanges.of(f), (a, b) -> a.with(f));
        }

        Domain build(boolean crossValidated) {
            Map<String, Ranges> out = new TreeMap<>();
            operatorDevices.forEach(d -> out.put(d, new Ranges(0, 0, 0, 0, 0, 0, Set.of())));
            ranges.forEach((d, r) -> out.put(d, new Ranges(r[0], r[1], r[2], r[3], r[4], r[5], phases.get(d))));
            return new Domain(out, operators, families, layers, minLayers == Integer.MAX_VALUE ? 0 : minLayers,
                    maxLayers, tensor, pipeline, crossValidated, measuredFamilies, precisions, lora);
        }
    }

    /** The same domain with another cross-validation flag. */
    Domain withCrossValidated(boolean value) {
        return new Domain(devices, operators, families, layers, minLayers, maxLayers, tensorDegrees, pipelineDegrees,
                value, measuredFamilies, precisions, loraRanks);
    }

    /** The union of two domains (a predictor adapted to a new device). */
    Domain plus(Domain other) {
        Map<String, Ranges> d = new TreeMap<>(devices);
        other.devices.forEach((k, v) -> d.merge(k, v, (a, b) -> {
            Set<Phase> ph = EnumSet.noneOf(Phase.class);
            ph.addAll(a.phases());
            ph.addAll(b.phases());
            return new Ranges(Math.min(a.minBatch(), b.minBatch()), Math.max(a.maxBatch(), b.maxBatch()),
                    Math.min(a.minWorld(), b.minWorld()), Math.max(a.maxWorld(), b.maxWorld()),
                    Math.min(a.minThreads(), b.minThreads()), Math.max(a.maxThreads(), b.maxThreads()), ph);
        }));
        SortedSet<String> ops = new TreeSet<>(operators);
        ops.addAll(other.operators);
        Set<OpFamily> fam = EnumSet.noneOf(OpFamily.class);
        fam.addAll(families);
        fam.addAll(other.families);
        Map<OpFamily, LayerRanges> lr = new EnumMap<>(OpFamily.class);
        lr.putAll(layers);
        other.layers.forEach((k, v) -> lr.merge(k, v, (a, b) -> new LayerRanges(Math.min(a.minFlops(), b.minFlops()),
                Math.max(a.maxFlops(), b.maxFlops()), Math.min(a.minBytes(), b.minBytes()),
                Math.max(a.maxBytes(), b.maxBytes()), Math.min(a.minIntensity(), b.minIntensity()),
                Math.max(a.maxIntensity(), b.maxIntensity()))));
        SortedSet<Integer> t = new TreeSet<>(tensorDegrees);
        t.addAll(other.tensorDegrees);
        SortedSet<Integer> p = new TreeSet<>(pipelineDegrees);
        p.addAll(other.pipelineDegrees);
        int lo = minLayers == 0 ? other.minLayers : other.minLayers == 0 ? minLayers : Math.min(minLayers,
                other.minLayers);
        Set<OpFamily> measured = EnumSet.noneOf(OpFamily.class);
        measured.addAll(measuredFamilies);
        measured.addAll(other.measuredFamilies);
        SortedSet<String> prec = new TreeSet<>(precisions);
        prec.addAll(other.precisions);
        // a side that did not record its ranks leaves the union unrecorded: nothing is checked
        SortedSet<Integer> ranks = new TreeSet<>();
        if (!loraRanks.isEmpty() && !other.loraRanks.isEmpty()) {
            ranks.addAll(loraRanks);
            ranks.addAll(other.loraRanks);
        }
        return new Domain(d, ops, fam, lr, lo, Math.max(maxLayers, other.maxLayers), t, p, crossValidated, measured,
                prec, ranks);
    }

    /**
     * The warnings for a workload and its prediction (whose breakdown gives each warning its share of the predicted
     * time), and how far outside the domain the workload lies ({@link Check#distance()}: 0 inside; it widens the
     * interval).
     *
     * @param w the workload
     * @param p its prediction
     * @return the warnings and the distance
     */
    public Check check(Workload w, Prediction p) {
        return check(w, p, true);
    }

    /**
     * {@link #check(Workload, Prediction)}; the graph's size is checked only with {@code wholeGraph}: the predictor
     * reads the graph whole (an interaction model), or the graph is laid out flat. A configuration's compact graph holds
     * one block of each kind, so its size is not the model's, and a layer-wise predictor predicts each of its layers
     * alone, whose features are checked one by one.
     */
    Check check(Workload w, Prediction p, boolean wholeGraph) {
        Shares sh = shares(p);
        Check settings = settingsCheck(w, sh);
        Check graph = graphCheck(w, p, wholeGraph);
        List<PredictionWarning> all = new ArrayList<>(settings.warnings());
        all.addAll(graph.warnings());
        return new Check(List.copyOf(all), settings.distance() + graph.distance());
    }

    /** The shares of a prediction: layers, and communication with contention. */
    record Shares(double layers, double communication) {
    }

    static Shares shares(Prediction p) {
        double total = p.millis() > 0 ? p.millis() : 1;
        double layerShare = 0;
        double commShare = 0;
        for (Prediction.Contribution c : p.breakdown()) {
            if (c.kind() == Prediction.Kind.LAYER || c.kind() == Prediction.Kind.COMPUTE) {
                // (LoRA adapters' products: the layers' work, said apart)
                layerShare += c.millis() / total;
            } else if (c.kind() == Prediction.Kind.COMMUNICATION || c.name().equals("contention")) {
                commShare += c.millis() / total;
            }
        }
        return new Shares(layerShare, commShare);
    }

    /**
     * The distance a GPU without training data adds: as much as a whole prediction resting on unseen families. (On
     * NeuSight's runs, each predicted with its GPU held out, the interval then held 94.7 % of them, against 85.1 %
     * without it: {@code evaluate-gpu}.)
     */
    static final double UNSEEN_DEVICE_DISTANCE = 1.0;

    /**
     * The fewest and most GPUs any GPU of the training data was measured with (its devices' world-size ranges pooled,
     * the host's {@code ""} left out), or {@code null} when no GPU has a range.
     */
    private int[] gpuWorldRange() {
        int lo = Integer.MAX_VALUE;
        int hi = 0;
        for (Map.Entry<String, Ranges> e : devices.entrySet()) {
            Ranges r = e.getValue();
            if (!e.getKey().isEmpty() && r.maxWorld() > 0) {
                lo = Math.min(lo, r.minWorld());
                hi = Math.max(hi, r.maxWorld());
            }
        }
        return hi == 0 ? null : new int[] {lo, hi};
    }

    /**
     * A device's ranges by its name, else by the name as a catalog matches it (case, spaces and punctuation aside: a
     * user's {@code ACME X1} row is the {@code Acme X1} the model was calibrated on); null for a device unseen.
     */
    private Ranges rangesOf(String device) {
        Ranges r = devices.get(device);
        if (r != null || device.isEmpty()) {
            return r;
        }
        String key = Device.key(device);
        return devices.entrySet().stream().filter(e -> Device.key(e.getKey()).equals(key)).map(Map.Entry::getValue)
                .findFirst().orElse(null);
    }

    /** The checks of the workload's settings (batch, world size, threads, phase, device, parallel degrees). */
    Check settingsCheck(Workload w, Shares sh) {
        List<PredictionWarning> out = new ArrayList<>();
        double layerShare = sh.layers();
        double commShare = sh.communication();
        double distance = 0;
        String device = w.device().map(Device::name).orElse(devices.size() == 1 ? devices.keySet().iterator().next()
                : "");
        Ranges r = rangesOf(device);
        boolean gpu = w.device().map(Device::isGpu).orElse(false);
        int[] anyGpu = gpu ? gpuWorldRange() : null;
        if (r == null && gpu && !devices.isEmpty()) {
            out.add(new PredictionWarning(PredictionWarning.Kind.UNSEEN_DEVICE, "GPU " + device + " has no kernels or "
                    + "runs in the training data: predicted from its description alone (profile a few of its kernels "
                    + "or runs: adapt, calibrate)", Optional.empty(), "", 1));
            distance += UNSEEN_DEVICE_DISTANCE;
        }
        if (anyGpu != null && (r == null || r.maxWorld() == 0)) {
            // no run on this GPU (no data at all, or kernels only): the job's size still has to lie where some GPU ran
            distance += anyGpuRange(out, device, w, anyGpu, commShare);
        }
        if (r != null && r.maxBatch() > 0) {
            int m = w.parallelism().microBatches();
            // a replica's batch of an iteration: with micro-batches, said as their product (--batch is one's)
            double own = range(out, PredictionWarning.Kind.OUTSIDE_BATCH_RANGE, "batch", w.batch(), m > 1
                    && w.batch() % m == 0 ? String.format(Locale.ROOT, " (a replica's iteration: %d a micro-batch x %d "
                    + "micro-batches)", w.batch() / m, m) : "", r.minBatch(), r.maxBatch(), 1.0);
            // the world size is GPUs for a GPU's workload (data-parallel replicas times the model-parallel degrees),
            // processes on a host
            own += gpu ? gpuRange(out, w, "", r.minWorld(), r.maxWorld(), Math.min(1, commShare))
                    : range(out, PredictionWarning.Kind.OUTSIDE_WORLD_SIZE_RANGE, "world size", w.worldSize(),
                            r.minWorld(), r.maxWorld(), Math.min(1, commShare));
            // a GPU job's host threads are no setting of it (its kernels run on the GPU): no range of them
            own += gpu ? 0 : range(out, PredictionWarning.Kind.OUTSIDE_THREADS_RANGE, "threads", w.threads(),
                    r.minThreads(), r.maxThreads(), Math.min(1, layerShare));
            if (!r.phases().isEmpty() && !r.phases().contains(w.phase())) {
                out.add(new PredictionWarning(PredictionWarning.Kind.UNSEEN_PHASE, "phase " + w.phase().label()
                        + " was never measured" + (device.isEmpty() ? "" : " on " + device), Optional.empty(),
                        r.phases().toString(), 1));
                own += 0.5;
            }
            if (anyGpu != null) {
                // a GPU known from a few small runs is never less certain than one known from its description alone
                // (the job then checked against the sizes any GPU ran): its warnings stay, its distance is capped
                own = Math.min(own, UNSEEN_DEVICE_DISTANCE + anyGpuRange(new ArrayList<>(), device, w, anyGpu,
                        commShare));
            }
            distance += own;
        }
        // the precision the device runs (TF32 on a GPU without TF32 units runs in FP32, which may have been measured)
        org.scaledl.workload.Precision runs = w.device().flatMap(d -> d.runs(w.precision())).orElse(w.precision());
        if (!precisions.isEmpty() && !precisions.contains(runs.label())) {
            out.add(new PredictionWarning(PredictionWarning.Kind.UNSEEN_PRECISION, "precision "
                    + runs.label() + " was never measured in training " + precisions + (gpu ? ": its matrix work is "
                    + "predicted from the peak alone" : ": a host (CPU) model does not tell precisions apart, and "
                    + "predicts it at the precision its runs measured"), Optional.empty(), precisions.toString(),
                    Math.min(1, layerShare)));
            distance += 0.5;
        }
        if (w.loraRank() > 0 && !loraRanks.isEmpty() && loraRanks.last() == 0) {
            out.add(new PredictionWarning(PredictionWarning.Kind.UNSEEN_LORA, "LoRA fine-tuning (rank " + w.loraRank()
                    + ") was never measured in training: the adapters' products and the frozen weights' saved "
                    + "gradients and states are predicted from the physics of full training's runs",
                    Optional.empty(), "lora rank 0", Math.min(1, layerShare)));
            distance += 0.5;
        }
        int tp = w.parallelism().tensor();
        int pp = w.parallelism().pipeline();
        if (tp > 1 && !tensorDegrees.contains(tp) || pp > 1 && !pipelineDegrees.contains(pp)) {
            out.add(new PredictionWarning(PredictionWarning.Kind.UNSEEN_PARALLELISM, "parallelism "
                    + w.parallelism() + " has a tensor or pipeline degree no training run had (tensor "
                    + tensorDegrees + ", pipeline " + pipelineDegrees + ")", Optional.empty(),
                    "tensor " + tensorDegrees + ", pipeline " + pipelineDegrees, Math.min(1, commShare + 0.0)));
            distance += 0.25;
        }
        return new Check(List.copyOf(out), distance);
    }

    /**
     * The checks of the graph at the workload's batch (operators, families, layer features, size where
     * {@code wholeGraph}, coverage, cross-validation), whose shares come from the prediction's breakdown. They do not
     * depend on the threads or the world size, so a caller scoring many placements of one graph may compute them once.
     */
    Check graphCheck(Workload w, Prediction p, boolean wholeGraph) {
        List<PredictionWarning> out = new ArrayList<>();
        double distance = 0;
        double total = p.millis() > 0 ? p.millis() : 1;
        ModelGraph g = w.graph();
        Flags flags = flags(g, w.batch());
        SortedSet<String> unseenOps = flags.unseenOps();
        SortedSet<String> unseenFamilies = flags.unseenFamilies();
        double opShare = 0;
        double familyShare = 0;
        double featureShare = 0;
        int featureLayers = flags.featureLayers().length;
        if (flags.any()) {
            double[] byLayer = new double[g.size()];
            for (Prediction.Contribution c : p.breakdown()) {
                if (c.layer().isPresent()) {
                    byLayer[c.layer().getAsInt()] += c.millis();
                }
            }
            opShare = share(flags.operatorLayers(), byLayer, total);
            familyShare = share(flags.familyLayers(), byLayer, total);
            featureShare = share(flags.featureLayers(), byLayer, total);
        }
        // operators whose layers are exactly the unseen families' are said once, with their families
        boolean sameLayers = !unseenFamilies.isEmpty()
                && java.util.Arrays.equals(flags.operatorLayers(), flags.familyLayers());
        if (!unseenOps.isEmpty() && !sameLayers) {
            out.add(new PredictionWarning(PredictionWarning.Kind.UNSEEN_OPERATOR, "operator types no training graph "
                    + "had: " + String.join(", ", unseenOps), Optional.empty(), "", clamp(opShare)));
        }
        if (!unseenFamilies.isEmpty()) {
            out.add(new PredictionWarning(PredictionWarning.Kind.UNSEEN_FAMILY, "operator families no training graph "
                    + "had (predicted with the shared centre): " + String.join(", ", unseenFamilies)
                    + (sameLayers && !unseenOps.isEmpty() ? " (operators " + String.join(", ", unseenOps) + ")" : ""),
                    Optional.empty(), "", clamp(familyShare)));
            distance += clamp(familyShare);
        }
        if (featureLayers > 0) {
            out.add(new PredictionWarning(PredictionWarning.Kind.LAYER_FEATURES_OUTSIDE_RANGE, featureLayers
                    + " layers have FLOPs, bytes or intensity outside what their family saw in training",
                    Optional.of((double) featureLayers), "", clamp(featureShare)));
            distance += 0.5 * clamp(featureShare);
        }
        if (wholeGraph && maxLayers > 0 && (g.size() > maxLayers || g.size() < minLayers)) {
            out.add(new PredictionWarning(PredictionWarning.Kind.GRAPH_SIZE_OUTSIDE_RANGE, "the graph has "
                    + g.size() + " layers; training graphs had " + minLayers + ".." + maxLayers,
                    Optional.of((double) g.size()), minLayers + ".." + maxLayers, 1));
            distance += 0.5 * Math.abs(Math.log((double) g.size() / (g.size() > maxLayers ? maxLayers
                    : Math.max(1, minLayers))));
        }
        Coverage c = g.coverage();
        if (!c.isComplete()) {
            double share = Math.max(c.unresolvedShareLayers(), c.unresolvedShareBytes());
            out.add(new PredictionWarning(PredictionWarning.Kind.PARTIAL_GRAPH, "partial graph: " + c.summary(),
                    Optional.of(share), "", clamp(share)));
            distance += clamp(share);
        }
        if (c.exportedBatch().isPresent()) {
            out.add(new PredictionWarning(PredictionWarning.Kind.FIXED_BATCH_EXPORT, "the graph was exported with the"
                    + " fixed batch " + c.exportedBatch().getAsLong() + ", treated as the batch", Optional.of(
                            (double) c.exportedBatch().getAsLong()), "", 1));
        }
        if (!crossValidated) {
            out.add(new PredictionWarning(PredictionWarning.Kind.NO_CROSS_VALIDATION, "the model could not "
                    + "cross-validate (fewer than 3 groups of training runs): its interval is a guess from "
                    + "in-sample errors", Optional.empty(), "", 1));
        }
        return new Check(List.copyOf(out), distance);
    }

    /**
     * The layers of a graph at a batch that the domain flags: operator types and families no training graph had,
     * and layers whose features lie outside their family's ranges. They depend on the graph and the batch only, so
     * they are kept with the graph (up to {@value #MAX_CACHED_FLAGS} domain and batch pairs per graph): a prediction then
     * only adds up the flagged layers' shares.
     */
    private record Flags(SortedSet<String> unseenOps, SortedSet<String> unseenFamilies, int[] operatorLayers,
            int[] familyLayers, int[] featureLayers) {
        boolean any() {
            return operatorLayers.length > 0 || familyLayers.length > 0 || featureLayers.length > 0;
        }
    }

    private static final int MAX_CACHED_FLAGS = 1024;

    /** A domain by identity (a record's hash walks all its ranges) and a batch. */
    private static final class FlagsKey {
        private final Domain domain;
        private final long batch;

        FlagsKey(Domain domain, long batch) {
            this.domain = domain;
            this.batch = batch;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof FlagsKey k && k.domain == domain && k.batch == batch;
        }

        @Override
        public int hashCode() {
            return System.identityHashCode(domain) * 31 + Long.hashCode(batch);
        }
    }

    private static final GraphCache<FlagsKey, Flags> FLAGS = new GraphCache<>(MAX_CACHED_FLAGS);

    private Flags flags(ModelGraph g, long batch) {
        return FLAGS.get(g, new FlagsKey(this, batch), () -> computeFlags(g, batch));
    }

    private Flags computeFlags(ModelGraph g, long batch) {
        SortedSet<String> unseenOps = new TreeSet<>();
        SortedSet<String> unseenFamilies = new TreeSet<>();
        List<Integer> opLayers = new ArrayList<>();
        List<Integer> familyLayers = new ArrayList<>();
        List<Integer> featureLayers = new ArrayList<>();
        for (LayerFeatures f : FeatureExtractor.of(g).extract(batch, Phase.INFER)) {
            if (!f.executes()) {
                continue;
            }
            Layer l = g.layer(f.layer());
            if (!operators.isEmpty() && !operators.contains(l.opType()) && !measuredFamilies.contains(f.family())) {
                unseenOps.add(l.opType());
                opLayers.add(f.layer());
            }
            LayerRanges lr = layers.get(f.family());
            if (!families.isEmpty() && !families.contains(f.family())) {
                unseenFamilies.add(f.family().name());
                familyLayers.add(f.layer());
            } else if (lr != null && lr.outside(f)) {
                featureLayers.add(f.layer());
            }
        }
        return new Flags(Collections.unmodifiableSortedSet(unseenOps), Collections.unmodifiableSortedSet(
                unseenFamilies), opLayers.stream().mapToInt(Integer::intValue).toArray(),
                familyLayers.stream().mapToInt(Integer::intValue).toArray(),
                featureLayers.stream().mapToInt(Integer::intValue).toArray());
    }

    /** The share of the predicted time that some layers take. */
    private static double share(int[] layerIndices, double[] byLayer, double total) {
        double s = 0;
        for (int i : layerIndices) {
            s += byLayer[i] / total;
        }
        return s;
    }

    /**
     * Warnings and how far outside the domain a workload lies.
     *
     * @param warnings the warnings
     * @param distance 0 inside the domain; grows with the log-distance outside the settings' ranges and with the
     *                 share of the prediction that rests on unseen families, out-of-range layers or unresolved ones
     */
    public record Check(List<PredictionWarning> warnings, double distance) {
    }

    private static double clamp(double share) {
        return Math.max(0, Math.min(1, share));
    }

    /** A range warning and the log2-distance outside the range (0 inside). */
    private static double range(List<PredictionWarning> out, PredictionWarning.Kind kind, String what, int value,
            int lo, int hi, double share) {
        return range(out, kind, what, value, "", lo, hi, share);
    }

    /** {@link #range} with what the value is made of said after it ({@code note}, or empty). */
    private static double range(List<PredictionWarning> out, PredictionWarning.Kind kind, String what, int value,
            String note, int lo, int hi, double share) {
        if (value >= lo && value <= hi) {
            return 0;
        }
        return outside(out, kind, String.format(Locale.ROOT, "%s %d%s is outside the training range %d..%d", what,
                value, note, lo, hi), value, lo, hi, share);
    }

    /** {@link #range} of a GPU job's size, said in {@link #gpus} words, with a note after the range. */
    private static double gpuRange(List<PredictionWarning> out, Workload w, String note, int lo, int hi,
            double share) {
        int value = w.worldSize();
        if (value >= lo && value <= hi) {
            return 0;
        }
        return outside(out, PredictionWarning.Kind.OUTSIDE_WORLD_SIZE_RANGE, String.format(Locale.ROOT,
                "%s %s outside the training range of %d..%d GPUs%s", gpus(w), value == 1 ? "is" : "are", lo, hi,
                note), value, lo, hi, share);
    }

    /**
     * A GPU job's size in words: its GPUs, and where each data-parallel replica spans several, how many replicas of
     * how many ({@code --world-size} counts the replicas, not the GPUs).
     */
    static String gpus(Workload w) {
        Parallelism p = w.parallelism();
        int n = p.ranks();
        int each = n / Math.max(1, p.data());
        return n + (n == 1 ? " GPU" : " GPUs") + (each > 1 ? " (" + p.data() + " data-parallel replica"
                + (p.data() == 1 ? "" : "s") + " of " + each + " GPUs)" : "");
    }

    /**
     * The world-size check of a GPU without runs of its own against the GPU counts any GPU of the training data ran
     * ({@link #gpuWorldRange()}): its warning and distance, as {@link #range}'s.
     */
    private static double anyGpuRange(List<PredictionWarning> out, String device, Workload w, int[] anyGpu,
            double commShare) {
        return gpuRange(out, w, " (of all GPUs: " + device + " has no runs of its own)", anyGpu[0], anyGpu[1],
                Math.min(1, commShare));
    }

    /** Adds the warning of a value outside {@code lo..hi} and returns its distance: doublings beyond the range. */
    private static double outside(List<PredictionWarning> out, PredictionWarning.Kind kind, String message, int value,
            int lo, int hi, double share) {
        out.add(new PredictionWarning(kind, message, Optional.of((double) value), lo + ".." + hi, clamp(share)));
        return Math.abs(Math.log((double) value / (value > hi ? hi : lo)) / Math.log(2));
    }

    /** As JSON, for the predictor's file and {@code inspect --model}. */
    public ObjectNode toJson() {
        ObjectNode o = JSON.objectNode();
        ObjectNode d = o.putObject("devices");
        devices.forEach((k, v) -> {
            ObjectNode r = d.putObject(k);
            r.putArray("batch").add(v.minBatch()).add(v.maxBatch());
            r.putArray("world_size").add(v.minWorld()).add(v.maxWorld());
            r.putArray("threads").add(v.minThreads()).add(v.maxThreads());
            v.phases().stream().sorted().forEach(p -> r.withArray("phases").add(p.label()));
            if (v.phases().isEmpty()) {
                r.putArray("phases");
            }
        });
        operators.forEach(o.putArray("operators")::add);
        families.stream().sorted().forEach(f -> o.withArray("families").add(f.name()));
        if (!measuredFamilies.isEmpty()) {
            measuredFamilies.stream().sorted().forEach(f -> o.withArray("measured_families").add(f.name()));
        }
        ObjectNode l = o.putObject("layers");
        layers.forEach((f, r) -> {
            ObjectNode x = l.putObject(f.name());
            x.putArray("flops").add(r.minFlops()).add(r.maxFlops());
            x.putArray("bytes").add(r.minBytes()).add(r.maxBytes());
            x.putArray("intensity").add(r.minIntensity()).add(r.maxIntensity());
        });
        o.putArray("graph_layers").add(minLayers).add(maxLayers);
        tensorDegrees.forEach(o.withArray("tensor_degrees")::add);
        pipelineDegrees.forEach(o.withArray("pipeline_degrees")::add);
        o.put("cross_validated", crossValidated);
        if (!precisions.isEmpty()) {
            precisions.forEach(o.withArray("precisions")::add);
        }
        if (!loraRanks.isEmpty()) {
            loraRanks.forEach(o.withArray("lora_ranks")::add);
        }
        return o;
    }

    /**
     * Reads {@link #toJson()}.
     *
     * @throws InvalidInputException for a malformed document
     */
    public static Domain fromJson(JsonNode o) {
        if (!o.isObject()) {
            throw InvalidInputException.of("domain is missing");
        }
        Map<String, Ranges> d = new TreeMap<>();
        for (Iterator<Map.Entry<String, JsonNode>> it = o.path("devices").fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode r = e.getValue();
            String at = "domain.devices['" + e.getKey() + "'].";
            Set<Phase> ph = EnumSet.noneOf(Phase.class);
            for (JsonNode p : r.path("phases")) {
                try {
                    ph.add(Phase.parse(p.asText()));
                } catch (InvalidInputException x) {
                    throw InvalidInputException.of(at + "phases: " + x.detail());
                }
            }
            int[] batch = intRange(r.path("batch"), at + "batch", 0);
            // a device with runs has batches, world sizes and threads of at least 1; one without (operators only)
            // has all zero
            int lo = batch[1] > 0 ? 1 : 0;
            batch = intRange(r.path("batch"), at + "batch", lo);
            int[] world = intRange(r.path("world_size"), at + "world_size", lo);
            int[] threads = intRange(r.path("threads"), at + "threads", lo);
            d.put(e.getKey(), new Ranges(batch[0], batch[1], world[0], world[1], threads[0], threads[1], ph));
        }
        SortedSet<String> ops = new TreeSet<>();
        o.path("operators").forEach(x -> ops.add(x.asText()));
        Set<OpFamily> fam = EnumSet.noneOf(OpFamily.class);
        Set<OpFamily> measured = EnumSet.noneOf(OpFamily.class);
        Map<OpFamily, LayerRanges> lr = new EnumMap<>(OpFamily.class);
        try {
            o.path("families").forEach(x -> fam.add(OpFamily.valueOf(x.asText())));
            o.path("measured_families").forEach(x -> measured.add(OpFamily.valueOf(x.asText())));
            for (Iterator<Map.Entry<String, JsonNode>> it = o.path("layers").fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                JsonNode x = e.getValue();
                OpFamily f = OpFamily.valueOf(e.getKey());
                String at = "domain.layers." + e.getKey() + ".";
                double[] flops = range(x.path("flops"), at + "flops");
                double[] bytes = range(x.path("bytes"), at + "bytes");
                double[] intensity = range(x.path("intensity"), at + "intensity");
                lr.put(f, new LayerRanges(flops[0], flops[1], bytes[0], bytes[1], intensity[0], intensity[1]));
            }
        } catch (IllegalArgumentException e) {
            throw InvalidInputException.of("domain names an unknown operator family: " + e.getMessage());
        }
        SortedSet<Integer> t = new TreeSet<>();
        degrees(o.path("tensor_degrees"), "domain.tensor_degrees", t);
        SortedSet<Integer> p = new TreeSet<>();
        degrees(o.path("pipeline_degrees"), "domain.pipeline_degrees", p);
        int[] graphLayers = o.has("graph_layers") ? intRange(o.path("graph_layers"), "domain.graph_layers", 0)
                : new int[2];
        SortedSet<String> prec = new TreeSet<>();
        for (JsonNode x : o.path("precisions")) {
            try {
                prec.add(Precision.parse(x.asText()).label());
            } catch (InvalidInputException e) {
                throw InvalidInputException.of("domain.precisions: " + e.detail());
            }
        }
        SortedSet<Integer> lora = new TreeSet<>();
        JsonNode ranks = o.path("lora_ranks");
        for (int i = 0; i < ranks.size(); i++) {
            lora.add(Fields.intInRange(ranks.get(i), "domain.lora_ranks[" + i + "]", 0, Integer.MAX_VALUE));
        }
        return new Domain(d, ops, fam, lr, graphLayers[0], graphLayers[1], t, p,
                o.path("cross_validated").asBoolean(false), measured, prec, lora);
    }

    /** A {@code [min, max]} pair of integers of at least {@code lo}, ordered. */
    private static int[] intRange(JsonNode pair, String what, int lo) {
        int min = Fields.intInRange(pair.get(0), what + "[0]", lo, Integer.MAX_VALUE);
        int max = Fields.intInRange(pair.get(1), what + "[1]", lo, Integer.MAX_VALUE);
        if (min > max) {
            throw InvalidInputException.of(what + " = [" + min + ", " + max + "] is not ordered (min > max)");
        }
        return new int[] {min, max};
    }

    /** A {@code [min, max]} pair of finite non-negative numbers, ordered. */
    private static double[] range(JsonNode pair, String what) {
        double min = Fields.inRange(pair.get(0), what + "[0]", 0, Double.MAX_VALUE);
        double max = Fields.inRange(pair.get(1), what + "[1]", 0, Double.MAX_VALUE);
        if (min > max) {
            throw InvalidInputException.of(what + " = [" + min + ", " + max + "] is not ordered (min > max)");
        }
        return new double[] {min, max};
    }

    /** Parallel degrees: positive integers. */
    private static void degrees(JsonNode list, String what, SortedSet<Integer> out) {
        for (int i = 0; i < list.size(); i++) {
            out.add(Fields.intInRange(list.get(i), what + "[" + i + "]", 1, Integer.MAX_VALUE));
        }
    }

    /** The domain of a version-1 file, which saved none: devices only, nothing else checked. */
    static Domain unknown(List<String> deviceNames, boolean crossValidated) {
        Map<String, Ranges> d = new TreeMap<>();
        for (String n : deviceNames.isEmpty() ? List.of("") : deviceNames) {
            d.put(n, new Ranges(0, 0, 0, 0, 0, 0, Set.of()));
        }
        return new Domain(d, new TreeSet<>(), Set.of(), Map.of(), 0, 0, new TreeSet<>(), new TreeSet<>(),
                crossValidated, Set.of(), new TreeSet<>(), new TreeSet<>());
    }
}
