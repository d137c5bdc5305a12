package org.scaledl.cli;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.scaledl.Checks;
import org.scaledl.InvalidInputException;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.model.RuntimePredictor;
import org.scaledl.workload.Device;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Phase;
import org.scaledl.workload.Precision;
import org.scaledl.workload.Topology;
import org.scaledl.workload.Workload;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The options that describe one job to predict, shared by {@code predict} and {@code scaling}: the model, the graph
 * (ONNX) or transformer (a Hugging Face configuration), the batch per micro-batch and the micro-batches, the parallel
 * degrees, the device and the cluster options. Options left out are empty ({@code null}): commands that take their
 * values from elsewhere (a candidate table's columns) tell given from default.
 */
final class JobOptions {
    @Option(names = "--model", required = true, description = "Bundled model (gpu, cpu-zoo, cpu-ddp, cpu-machines) "
            + "or a saved one (scaledl fit)")
    String model;

    @Option(names = "--graph", description = "ONNX graph (one workload)")
    Path graph;

    @Option(names = "--transformer", description = "Hugging Face config.json, or the model's folder holding one "
            + "(one workload, with --seq), instead of --graph")
    Path transformer;

    @Option(names = "--seq", description = "Sequence length of --transformer")
    Integer seq;

    @Option(names = "--batch", description = "Samples (sequences) per micro-batch; with one micro-batch, per "
            + "data-parallel worker")
    Integer batch;

    @Option(names = {"--world-size", "--data-parallel"}, description = "Data-parallel replicas (default 1; "
            + "--data-parallel says the same): a job uses world-size x tensor x pipeline x context GPUs (predict: or "
            + "give them all with --gpus; PyTorch's WORLD_SIZE counts every GPU)")
    Integer worldSize;

    @Option(names = "--tensor", description = "Tensor-parallel degree (device models; default 1)")
    Integer tensor;

    @Option(names = "--pipeline", description = "Pipeline stages (device models; default 1)")
    Integer pipeline;

    @Option(names = "--micro-batches", description = "Micro-batches per iteration per data-parallel worker, "
            + "through the pipeline or accumulated (default 1)")
    Integer microBatches;

    @Option(names = "--threads", description = "Threads per worker of a CPU host model (default 1; a GPU model "
            + "predicts one process a GPU and refuses it)")
    Integer threads;

    @Option(names = "--phase", description = "train (one training iteration: forward, backward, optimizer) or infer "
            + "(one forward pass over the batch: a transformer's prefill of --seq tokens a sequence, no decoding; "
            + "default train)")
    Phase phase;

    @Option(names = "--device", description = "GPU of a device model (\"NVIDIA H100 80GB HBM3\"; scaledl devices "
            + "lists them), or the CPU machine of a host model that knows several")
    String device;

    @Option(names = "--devices", description = "Extra device catalog CSV (the catalog's or NeuSight's "
            + "device_configs layout); its GPUs are added beside the bundled ones, never in their place")
    Path devices;


    @Mixin
    GraphOptions graphOptions;

    /** The catalog, read once per command. */
    private DeviceCatalog catalog;

    @Mixin
    ClusterOptions cluster;

    /** The one workload the options describe. */
    Workload workload(RuntimePredictor p) {
        return workload(p, graph());
    }

    /** The graph {@code --graph} or {@code --transformer} with {@code --seq} names. */
    org.scaledl.graph.ModelGraph graph() {
        if (graph != null) {
            return graphOptions.read(graph);
        }
        Checks.argument(seq > 0, "--seq must be positive, got %s", seq);
        return graphOptions.readTransformer(transformer, seq);
    }

    /**
     * Why {@code threads} per worker other than 1 are refused with {@code p}: a GPU model predicts one process a GPU
     * (threads only widened its interval); empty for a CPU host model, or 1.
     */
    static java.util.Optional<String> gpuThreads(RuntimePredictor p, int threads) {
        return threads != 1 && p.deviceLayerModel().isPresent()
                ? java.util.Optional.of("threads per worker are a CPU host model's; a GPU model predicts one process a "
                        + "GPU")
                : java.util.Optional.empty();
    }

    /** The one workload the options describe, of a graph {@link #graph()} read. */
    Workload workload(RuntimePredictor p, org.scaledl.graph.ModelGraph g) {
        Checks.argument(batch > 0 && batch <= org.scaledl.io.DatasetReader.MAX_BATCH, "--batch must be in 1..%s, "
                + "got %s", org.scaledl.io.DatasetReader.MAX_BATCH, batch);
        int m = positive(microBatches, "--micro-batches");
        Checks.argument((long) batch * m <= Integer.MAX_VALUE, "--batch x --micro-batches is too large");
        if (threads != null && threads >= 1) {
            gpuThreads(p, threads).ifPresent(why -> {
                throw new IllegalArgumentException("--threads " + threads + ": " + why + " (leave --threads out)");
            });
        }
        Parallelism par = cluster.parallelism(positive(worldSize, "--data-parallel (--world-size)"),
                positive(tensor, "--tensor"), positive(pipeline, "--pipeline"), m, g);
        Workload.Builder wb = Workload.builder(g).batch(batch * m).threads(positive(threads, "--threads"))
                .phase(phase == null ? Phase.TRAIN : phase).parallelism(par).precision(cluster.precision())
                .recompute(cluster.recompute()).recomputeLayers(cluster.recomputeLayers())
                .recomputeModules(cluster.recomputeModules())
                .offloadLayers(cluster.offloadLayers())
                .expertImbalance(cluster.expertImbalance()).lora(cluster.loraRank())
                .unevenPipeline(cluster.unevenPipeline).documentTokens(cluster.documentTokens())
                .memoryFormat(cluster.memoryFormat());
        if (cluster.moeDispatcher != null && par.expert() == 1) {
            throw org.scaledl.InvalidInputException.of("--moe-dispatcher " + cluster.moeDispatcher.label() + " needs "
                    + "--expert > 1 (the tokens' dispatch is expert parallelism's)");
        }
        cluster.stateSchedule(wb);
        cluster.sixteenBitGradients().ifPresent(wb::sixteenBitGradients);
        Optional<Device> d = resolveDevice(p, device);
        d.ifPresent(wb::device);
        if (d.isPresent()) {
            cluster.topology(d.get()).ifPresent(wb::topology);
        } else if (cluster.gpusPerNode != null || cluster.interNodeGbps != null || cluster.nvlinkDomain != null) {
            throw new IllegalArgumentException("--gpus-per-node, --nvlink-domain and --inter-node-gbps describe nodes "
                    + "of GPUs: they apply with a device model and --device");
        }
        if (cluster.memoryFormat != null && !p.modelsClusters()) {
            throw new IllegalArgumentException("--memory-format lays out convolutions on a GPU; " + model
                    + " predicts CPU machines");
        }
        if (cluster.memoryFormat != null && g.transformer().isPresent()) {
            throw new IllegalArgumentException("--memory-format lays out an imported graph's convolutions; a "
                    + "transformer built from its configuration has none");
        }
        if (!p.modelsClusters() && (cluster.precision != null && cluster.precision != Precision.FP32)) {
            throw new IllegalArgumentException("--precision " + cluster.precision.label() + " applies to GPU models; "
                    + model + " predicts CPU machines, which run FP32");
        }
        Workload w;
        try {
            w = wb.build();
        } catch (IllegalArgumentException e) {
            // settings that do not go together (LoRA in inference, 16-bit gradients in FP32): bad input, as in a
            // candidate table's row
            throw InvalidInputException.of(e.getMessage());
        }
        if (p.modelsClusters()) {
            // a layout that does not divide the model, or a precision the GPU has no units for, is bad input (exit 1),
            // as it is in a candidate table's row
            try {
                org.scaledl.model.exec.ParallelExecution.checkJob(w);
            } catch (IllegalArgumentException e) {
                throw InvalidInputException.of(e.getMessage());
            }
            precisionAssumed(p, w).ifPresent(said -> System.err.println("scaledl: warning: " + said));
        }
        return w;
    }

    /**
     * What is said where a GPU job of a cluster model gives no precision: FP32, PyTorch's default, is rarely what a
     * GPU job runs (said, as layouts says its FP16; {@code predict --json} lists it among its warnings).
     */
    java.util.Optional<String> precisionAssumed(RuntimePredictor p, Workload w) {
        if (!p.modelsClusters() || cluster.precision != null || w.device().isEmpty()) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of("--precision not given: fp32 assumed (PyTorch's default, no tensor cores); "
                + (w.phase() == Phase.TRAIN ? "mixed-precision training" : "16-bit inference") + " is --precision bf16 "
                + "or fp16 (tf32, fp8, mxfp8, nvfp4: see devices)");
    }

    private static int positive(Integer value, String option) {
        return ClusterOptions.positive(value, option);
    }

    /**
     * The data-parallel replicas of a job given by its GPUs ({@code predict --gpus}): {@code gpus} over the GPUs of
     * one replica, {@code --tensor × --pipeline × --context}.
     *
     * @throws IllegalArgumentException where a degree is not positive or the replica's GPUs do not divide
     */
    static int replicas(int gpus, Integer tensor, Integer pipeline, Integer context) {
        Checks.argument(gpus > 0, "--gpus must be positive, got %s", gpus);
        int t = positive(tensor, "--tensor");
        int p = positive(pipeline, "--pipeline");
        int c = positive(context, "--context");
        return Parallelism.replicas(gpus, t, p, c).orElseThrow(() -> new IllegalArgumentException(String.format(
                Locale.ROOT, "--gpus %d is not a multiple of --tensor %d x --pipeline %d x --context %d = %d GPUs a "
                        + "data-parallel replica", gpus, t, p, c, (long) t * p * c)));
    }

    /**
     * For a host (CPU) prediction, a warning when the machine it is for is not the one this runs on, with the command
     * that makes a predictor for this one: by what the predictor knows of the machine (vendor, model number, cores,
     * vector units: {@link LocalMachine#differences}), or, for a machine it knows by name only, by the CPU's model
     * name ({@link LocalMachine#couldBe}).
     */
    Optional<String> otherMachine(RuntimePredictor p, Workload w) {
        if (p.modelsClusters()) {
            return Optional.empty();
        }
        String theirs = w.device().map(Device::name).orElse(p.machines().size() == 1 ? p.machines().get(0) : "");
        if (theirs.isEmpty()) {
            return Optional.empty();
        }
        return otherMachine(theirs, p.machine(theirs), LocalMachine.detect());
    }

    /** {@link #otherMachine(RuntimePredictor, Workload)} for a given machine here. */
    Optional<String> otherMachine(String theirs, Optional<Device> described, LocalMachine here) {
        List<String> differences = described.map(here::differences)
                .orElseGet(() -> here.couldBe(theirs) ? List.of() : List.of("another CPU model"));
        if (differences.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("the prediction is for the machine '" + theirs + "', not this one ("
                + here.describe() + ": " + String.join(", ", differences) + "); for this machine, measure a few "
                + "planned runs here and calibrate, in one command from the repository's root (PyTorch needed): "
                + "PYTHONPATH=python python3 -m scaledl_profiler here --jar " + jar() + " --model " + model
                + " --out mine.sdl");
    }

    /**
     * The recomputation a job runs with as the predictor resolves {@code auto}: {@code none}, {@code selective},
     * {@code full}, or {@code full:21} for the first 21 layers of each chunk.
     */
    static String recomputeUsed(RuntimePredictor p, Workload w) {
        return recomputeLabel(p.resolved(w));
    }

    /**
     * A resolved job's recomputation as a short label: none, selective, full or full:N (N layers per chunk), with
     * +off:N where the activations of N layers per chunk are offloaded to the host.
     */
    static String recomputeLabel(Workload resolved) {
        int off = resolved.offloadLayers();
        return resolved.recomputeLabel() + (off > 0 ? "+off:" + off : "");
    }

    /** The jar this command runs from, relative to the working directory where it lies below it. */
    static String jar() {
        try {
            Path p = Path.of(JobOptions.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                    .toAbsolutePath().normalize();
            Path here = Path.of("").toAbsolutePath();
            return (p.startsWith(here) ? here.relativize(p) : p).toString();
        } catch (java.net.URISyntaxException | RuntimeException e) {
            return "scaledl-examples/target/scaledl.jar";
        }
    }

    /**
     * What the prediction is for, in words: the GPU and its nodes (saying when they are the assumed standard server),
     * or the CPU machine.
     */
    static String machine(RuntimePredictor p, Workload w) {
        if (w.device().isPresent() && p.modelsClusters()) {
            Device d = w.device().get();
            Topology t = w.topology().orElse(Topology.assumedFor(d));
            int gpus = w.parallelism().ranks();
            int nodes = (gpus + t.gpusPerNode() - 1) / t.gpusPerNode();
            return String.format(Locale.ROOT, "%d GPU%s (%s) on %d node%s, %s%s", gpus, gpus == 1 ? "" : "s",
                    d.name(), nodes, nodes == 1 ? "" : "s", t.describe(), !t.assumed() ? ""
                            : w.topology().isPresent() ? " (partly given, the rest the standard system's)"
                            : " (the standard system, assumed)");
        }
        if (w.device().isPresent()) {
            return "the CPU machine " + w.device().get().name();
        }
        return p.machines().size() == 1 ? "the CPU machine it was fitted on (" + p.machines().get(0) + ")"
                : "the CPU machine it was fitted on";
    }

    /** The device of a workload: a GPU of the catalog for device models, a known machine for host ones. */
    Optional<Device> resolveDevice(RuntimePredictor p, String name) {
        if (p.modelsClusters()) {
            if (name == null || name.isEmpty()) {
                throw new IllegalArgumentException(model + " is a device model: say which GPU with --device NAME "
                        + "(scaledl devices lists them)");
            }
            if (catalog == null) {
                catalog = Catalogs.of(devices);
            }
            try {
                Device d = catalog.require(name);
                // (a table's device cells and other callers' names are read alike; what was typed is said as typed)
                Catalogs.sayAlsoFitting(catalog, name.equals(device) ? "--device" : "the device", name, d);
                return Optional.of(d);
            } catch (InvalidInputException e) {
                // a GPU the model was calibrated on, described by a --devices file then: the file is what is missing
                String key = Device.key(name);
                throw new IllegalArgumentException(e.getMessage() + Catalogs.calibratedOnHint(p, model,
                        c -> Device.key(c).equals(key)), e);
            }
        }
        if (devices != null) {
            throw new IllegalArgumentException("--devices applies to device models (scaledl fit --gpu); " + model
                    + " is not one");
        }
        if (name == null || name.isEmpty()) {
            return Optional.empty();
        }
        if (!p.machines().contains(name)) {
            // a GPU's name given to a CPU model: the bundled gpu model predicts it
            Optional<String> gpu = org.scaledl.io.DeviceCatalog.bundled().find(name).map(d -> "; " + d.name()
                    + " is a GPU: --model gpu predicts it");
            throw new IllegalArgumentException("machine '" + name + "' is not one of this model's " + p.machines()
                    + gpu.or(() -> org.scaledl.Suggestions.closest(name, p.machines())
                            .map(s -> "; did you mean '" + s + "'?")).orElse(""));
        }
        // the machine as the model's runs described it (a calibration keeps that description), else by name
        return Optional.of(p.machine(name).orElse(Device.cpu(name, 1, 0, 0, 0, 0)));
    }
}
