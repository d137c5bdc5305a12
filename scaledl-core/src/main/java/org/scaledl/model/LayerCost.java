package org.scaledl.model;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.scaledl.Checks;
import org.scaledl.model.comm.AllReduceModel;
import org.scaledl.model.comm.CommunicationModel;
import org.scaledl.model.cost.LayerStage;
import org.scaledl.model.device.DeviceLayerModel;
import org.scaledl.model.device.DeviceStage;
import org.scaledl.model.exec.EagerModel;
import org.scaledl.model.exec.MegatronFit;
import org.scaledl.model.host.HostStage;
import org.scaledl.model.host.LayerBasis;
import org.scaledl.workload.CollectiveMeasurement;
import org.scaledl.workload.OpMeasurement;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * Which layer cost model a {@link RuntimePredictor} fits, with the options that belong to it: the <b>host</b> basis
 * (a CPU machine, fitted from whole-iteration times only; options: shrinkage, weight of per-module times) or the
 * <b>device</b> model (boosted trees per operator family over device-relative features, fitted on operator
 * measurements of several GPUs and predicting any GPU its catalog describes; options: collective measurements for the
 * communication model, operators profiled on the target GPUs to adapt to). Each strategy fits, calibrates and saves
 * its own stage; an option of the other strategy cannot be set on it.
 *
 * <pre>{@code
 * RuntimePredictor.builder().layerCost(LayerCost.host().withShrinkage(0.01));                 // the default: host()
 * RuntimePredictor.builder().layerCost(LayerCost.device(KernelTables.neusight(dir, catalog))
 *         .withCollectives(allReduceRuns));
 * }</pre>
 */
public abstract sealed class LayerCost permits LayerCost.Host, LayerCost.Device {
    private LayerCost() {
    }

    /** The host basis with default options (shrinkage chosen by cross-validation, no per-module times). */
    public static Host host() {
        return Host.DEFAULT;
    }

    /**
     * The device model, fitted on operator measurements; the samples given to {@code fit} then calibrate it (and may
     * be empty).
     *
     * @throws IllegalArgumentException without measurements
     */
    public static Device device(List<OpMeasurement> measurements) {
        Checks.argument(!java.util.Objects.requireNonNull(measurements, "measurements").isEmpty(),
                "the device layer model needs operator measurements");
        return new Device(measurements, List.of(), List.of());
    }

    /**
     * The provenance configuration key listing the training runs a fit left out as ones no model explains (where
     * each was read, {@code runs.csv:12}, else its workload), comma-separated; absent when none was.
     */
    public static final String LEFT_OUT = "left_out_runs";

    /** Where a sample was read ({@code file:line}), else its workload. */
    private static String where(Sample s) {
        return s.workload().tag(org.scaledl.io.DatasetReader.SOURCE_TAG).orElse(s.workload().toString());
    }

    /** {@code host} or {@code device}. */
    public abstract String kind();

    /**
     * What a strategy's fit gives the predictor.
     *
     * @param stage        the fitted stage
     * @param logErrors    {@code log(predicted / measured)} of the training runs, out-of-group where cross-validated
     * @param cvMre        cross-validated MRE (NaN when not cross-validated)
     * @param domain       what the training data covered
     * @param devices      the machines or GPUs of the training data, sorted
     * @param config       the strategy's options, for provenance
     * @param outliers     the samples the fit left out as ones no model explains (same instances as given)
     */
    record Fitted(LayerStage stage, List<Double> logErrors, double cvMre, Domain domain, List<String> devices,
            Map<String, String> config, List<Sample> outliers) {
    }

    /** Fits the stage on the samples, cross-validating over the values of {@code groupTag}. */
    abstract Fitted fit(List<Sample> samples, String groupTag);

    /**
     * The same strategy with the choices a full fit made held fixed (the shrinkage), for the out-of-group fits of an
     * interaction stage: with another shrinkage the network would learn another layer-wise model's errors.
     */
    abstract LayerCost heldAt(LayerStage fitted);

    /** The host basis's options. Immutable. */
    public static final class Host extends LayerCost {
        private static final Host DEFAULT = new Host(Optional.empty(), 0);
        private final Optional<Double> shrinkage;
        private final double layerTimeWeight;

        private Host(Optional<Double> shrinkage, double layerTimeWeight) {
            this.shrinkage = shrinkage;
            this.layerTimeWeight = layerTimeWeight;
        }

        /** Fixes the basis's shrinkage strength instead of choosing it by cross-validation. */
        public Host withShrinkage(double value) {
            Checks.argument(value >= 0 && Double.isFinite(value), "shrinkage must be >= 0: %s", value);
            return new Host(Optional.of(value), layerTimeWeight);
        }

        /**
         * How much the measured per-module forward times of the samples ({@link Sample#layerMillis()}) weigh in the
         * fit, relative to the whole-iteration times (default 0: on the bundled data, adding them at weight 0.1 or
         * 0.5 made held-out errors worse, 19.1 % and 19.2 % MRE against 18.5 % without).
         */
        public Host withLayerTimeWeight(double value) {
            Checks.argument(value >= 0 && Double.isFinite(value), "weight must be >= 0: %s", value);
            return new Host(shrinkage, value);
        }

        /** The configured shrinkage (empty: chosen by cross-validation). */
        public Optional<Double> shrinkage() {
            return shrinkage;
        }

        /** The weight of per-module times. */
        public double layerTimeWeight() {
            return layerTimeWeight;
        }

        /** The design row of a workload for the host basis ({@code ProfilingPlan} chooses among these). */
        public double[] designRow(Workload w) {
            return LayerBasis.standard().row(w);
        }

        @Override
        public String kind() {
            return HostStage.KIND;
        }

        @Override
        Fitted fit(List<Sample> samples, String groupTag) {
            HostStage.Fit f = HostStage.fit(samples, shrinkage, groupTag, layerTimeWeight);
            Map<String, String> config = new TreeMap<>();
            config.put("shrinkage", shrinkage.map(String::valueOf).orElse("auto"));
            config.put("layer_time_weight", String.valueOf(layerTimeWeight));
            if (f.machineOrder().size() > 1) {
                config.put("machines", String.join(", ", f.machineOrder()));
            }
            if (!f.outliers().isEmpty()) {
                config.put(LEFT_OUT, String.join(", ", f.outliers().stream().map(LayerCost::where).toList()));
            }
            Domain domain = new Domain.Collector().samples(PredictorTrainer.without(samples, f.outliers()))
                    .build(f.crossValidated());
            List<String> devices = f.machineOrder().stream().filter(k -> !k.isEmpty()).sorted().toList();
            return new Fitted(f.stage(), f.logErrors(), f.cvMre(), domain, devices, config, f.outliers());
        }

        @Override
        LayerCost heldAt(LayerStage fitted) {
            return shrinkage.isPresent() ? this : withShrinkage(((HostStage) fitted).chosenShrinkage());
        }

        @Override
        public String toString() {
            return "host" + shrinkage.map(s -> "(shrinkage " + s + ")").orElse("");
        }
    }

    /** The device model's options. Immutable. */
    public static final class Device extends LayerCost {
        private final List<OpMeasurement> measurements;
        private final List<CollectiveMeasurement> collectives;
        private final List<OpMeasurement> profiled;

        private Device(List<OpMeasurement> measurements, List<CollectiveMeasurement> collectives,
                List<OpMeasurement> profiled) {
            this.measurements = List.copyOf(measurements);
            this.collectives = List.copyOf(collectives);
            this.profiled = List.copyOf(profiled);
        }

        /** Measured collectives to fit the communication model on (needed to predict jobs on several GPUs). */
        public Device withCollectives(List<CollectiveMeasurement> value) {
            return new Device(measurements, value, profiled);
        }

        /** Operators profiled on the target GPUs, to adapt the layer model to ({@link DeviceLayerModel#adapt}). */
        public Device withAdaptTo(List<OpMeasurement> value) {
            return new Device(measurements, collectives, value);
        }

        /** The operator measurements the layer model is fitted on. */
        public List<OpMeasurement> measurements() {
            return measurements;
        }

        /** The collective measurements. */
        public List<CollectiveMeasurement> collectives() {
            return collectives;
        }

        /** The operators profiled on target GPUs. */
        public List<OpMeasurement> adaptTo() {
            return profiled;
        }

        @Override
        public String kind() {
            return DeviceStage.KIND;
        }

        /**
         * Fits the layer model on the operator measurements, calibrates its per-phase factors on the runs of imported
         * graphs (eager execution), and fits the Megatron execution model's group coefficients on the runs of
         * configuration-built transformers ({@link #megatron}).
         */
        @Override
        Fitted fit(List<Sample> samples, String groupTag) {
            Map<String, String> config = new TreeMap<>();
            List<Sample> eager = samples.stream().filter(x -> x.workload().graph().transformer().isEmpty()).toList();
            List<Sample> megatron = samples.stream().filter(x -> x.workload().graph().transformer().isPresent())
                    .toList();
            // the runs' GPUs are speeds the model is fitted at (DeviceLayerModel.SpeedCap): set before any factor is
            // fitted
            DeviceLayerModel m = DeviceLayerModel.fit(measurements).coveringRuns(samples);
            if (!profiled.isEmpty()) {
                m = m.adapt(profiled);
                config.put(Provenance.ADAPTED_KERNELS, Integer.toString(profiled.size()));
            }
            m = m.calibrate(eager);
            Optional<CommunicationModel> comm = collectives.isEmpty() ? Optional.empty()
                    : Optional.of(AllReduceModel.fit(collectives));
            config.put("collectives", Integer.toString(collectives.size()));
            // The interval: each run predicted with its GPU left out of the calibration, where runs cover at least
            // three GPUs; else the calibrated model's own errors on its runs.
            long gpus = eager.stream().map(sm -> DeviceLayerModel.deviceOf(sm.workload()).name()).distinct().count();
            List<Double> errors = gpus >= 3 ? new ArrayList<>(m.heldOutDeviceLogErrors(eager)) : new ArrayList<>();
            boolean crossValidated = !errors.isEmpty() || eager.isEmpty();
            if (errors.isEmpty()) {
                for (Sample sm : eager) {
                    errors.add(Math.log(m.predictMillis(sm.workload()) / sm.millis()));
                }
            }
            DeviceStage stage = new DeviceStage(m, comm).withEager(new EagerModel(EagerModel.DEFAULT_DISPATCH_MS));
            if (!megatron.isEmpty()) {
                MegatronFit mf = MegatronFit.fit(stage::megatronTerms, megatron, groupTag);
                stage = stage.withMegatron(mf.model());
                config.put("megatron_runs", Integer.toString(megatron.size()));
                config.put("megatron_cv_mre", String.format(java.util.Locale.ROOT, "%.4f", mf.logErrors().stream()
                        .mapToDouble(x -> Math.abs(Math.expm1(x))).average().orElse(Double.NaN)));
            }
            double cvMre = crossValidated && !errors.isEmpty() ? errors.stream()
                    .mapToDouble(x -> Math.abs(Math.expm1(x))).average().orElseThrow() : Double.NaN;
            Domain domain = new Domain.Collector().operators(measurements).operators(profiled).samples(samples)
                    .build(crossValidated && !errors.isEmpty());
            return new Fitted(stage, errors, cvMre, domain, m.devices(), config, List.of());
        }

        @Override
        LayerCost heldAt(LayerStage fitted) {
            return this;
        }

        @Override
        public String toString() {
            return "device(" + measurements.size() + " operator measurements)";
        }
    }
}
