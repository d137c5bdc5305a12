package org.scaledl.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.scaledl.io.DeviceCatalog;
import org.scaledl.workload.Parallelism;
import org.scaledl.workload.Sample;
import org.scaledl.workload.Workload;

/**
 * The contract every configuration of {@link RuntimePredictor} keeps, run by one subclass per configuration (host,
 * device, with the GNN interaction stage in {@code scaledl-graph}): the breakdown adds up to the prediction, a device
 * or parallelism it cannot predict is refused, eight threads give the sequential results, batch scoring in any order
 * from eight threads is sequential {@code predict}, a save and load predicts bit-identically, and the same samples and
 * seed give the same model, and a calibration on no runs changes nothing.
 */
public abstract class RuntimePredictorContract {
    /** The configuration under test. */
    protected abstract org.scaledl.model.PredictorTrainer trainer();

    /** The samples it is fitted on. */
    protected abstract List<Sample> samples();

    /** Workloads it must predict (a mix of settings). */
    protected abstract List<Workload> workloads();

    /** A workload it must refuse (another device, or none where one is needed). */
    protected abstract Workload wrongDevice();

    /** A parallelism it does not model, on a workload it would otherwise predict; null when it models them all. */
    protected Workload unsupportedParallelism() {
        return workloads().get(0).toBuilder().parallelism(Parallelism.of(1, 2, 2, 1)).build();
    }

    private RuntimePredictor fitted;

    protected final RuntimePredictor fitted() {
        if (fitted == null) {
            fitted = trainer().fit(samples());
        }
        return fitted;
    }

    @Test
    void breakdownAddsUpToThePredictionAndTheIntervalContainsIt() {
        for (Workload w : workloads()) {
            Prediction p = fitted().predict(w);
            double sum = p.breakdown().stream().mapToDouble(Prediction.Contribution::millis).sum();
            assertTrue(p.millis() > 0 && Double.isFinite(p.millis()), w.toString());
            assertEquals(p.millis(), sum, 1e-9 * p.millis(), w.toString());
            assertTrue(p.lowMillis() <= p.millis() && p.millis() <= p.highMillis(), w.toString());
            assertEquals(p.millis(), fitted().predictMillis(w), 1e-9 * p.millis(), "fast path " + w);
            for (Prediction.Contribution c : p.breakdown()) {
                assertTrue(c.millis() >= 0, c.toString());
                if (c.kind() == Prediction.Kind.LAYER) {
                    assertTrue(w.graph().indexOf(c.name()).isPresent(), c.name());
                }
            }
        }
    }

    @Test
    void whatItCannotPredictIsRefused() {
        assertThrows(IllegalArgumentException.class, () -> fitted().predict(wrongDevice()));
        assertThrows(IllegalArgumentException.class, () -> fitted().predictMillis(wrongDevice()));
        Workload par = unsupportedParallelism();
        if (par != null) {
            assertThrows(IllegalArgumentException.class, () -> fitted().predict(par));
        }
    }

    @Test
    void eightThreadsGiveTheSequentialResults() throws Exception {
        List<Workload> ws = workloads();
        RuntimePredictor p = trainer().fit(samples());
        double[] sequential = ws.stream().mapToDouble(w -> p.predict(w).millis()).toArray();
        RuntimePredictor q = trainer().fit(samples());
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<double[]>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                futures.add(pool.submit(() -> ws.stream().mapToDouble(w -> q.predict(w).millis()).toArray()));
            }
            for (Future<double[]> f : futures) {
                assertArrayEquals(sequential, f.get());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Batch scoring depends neither on the order of the rows nor on the threads asking: a candidate table (the
     * workloads, some repeated) scored by {@link RuntimePredictor#predictAll} in a random order, and by
     * {@link RuntimePredictor#predictScored} from eight threads at once, each in its own random order, gives every row
     * bit-identically what {@link RuntimePredictor#predict} gives it sequentially, without the breakdown. Each
     * arrangement starts from a freshly loaded predictor, so no cache filled in another order can hide a difference.
     */
    @Property(tries = 6)
    void scoringATableInAnyOrderFromEightThreadsIsSequentialPredict(@ForAll long seed) throws Exception {
        byte[] bytes = fitted().toBytes();
        Random r = new Random(seed);
        List<Workload> table = new ArrayList<>();
        for (int i = 0; i < 3 * workloads().size(); i++) {
            table.add(workloads().get(r.nextInt(workloads().size())));
        }
        RuntimePredictor sequential = RuntimePredictor.load(bytes);
        List<Prediction> expected = new ArrayList<>();
        for (Workload w : table) {
            Prediction p = sequential.predict(w);
            expected.add(new Prediction(p.millis(), p.lowMillis(), p.highMillis(), List.of(), p.warnings(),
                    p.samples(), p.memoryGb(), p.job(), p.memoryParts()));
        }
        List<Integer> order = shuffled(table.size(), r);
        List<Prediction> all = RuntimePredictor.load(bytes).predictAll(order.stream().map(table::get).toList());
        for (int k = 0; k < order.size(); k++) {
            assertEquals(expected.get(order.get(k)), all.get(k), "predictAll, row " + order.get(k));
        }
        RuntimePredictor shared = RuntimePredictor.load(bytes);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<Prediction[]>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                List<Integer> own = shuffled(table.size(), new Random(seed + t));
                futures.add(pool.submit(() -> {
                    Prediction[] out = new Prediction[table.size()];
                    for (int i : own) {
                        out[i] = shared.predictScored(table.get(i));
                    }
                    return out;
                }));
            }
            for (Future<Prediction[]> f : futures) {
                assertEquals(expected, List.of(f.get()), "eight threads");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static List<Integer> shuffled(int n, Random r) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(i);
        }
        Collections.shuffle(out, r);
        return out;
    }

    @Test
    void saveAndLoadPredictBitIdentically(@TempDir Path dir) {
        Path file = dir.resolve("m.sdl");
        fitted().save(file);
        for (RuntimePredictor back : List.of(RuntimePredictor.load(file), RuntimePredictor.load(fitted().toBytes()))) {
            assertEquals(fitted().name(), back.name());
            assertEquals(fitted().domain(), back.domain());
            assertEquals(fitted().provenance(), back.provenance());
            for (Workload w : workloads()) {
                Prediction a = fitted().predict(w);
                Prediction b = back.predict(w);
                assertEquals(a.millis(), b.millis(), 0.0, w.toString());
                assertEquals(a.lowMillis(), b.lowMillis(), 0.0, w.toString());
                assertEquals(a.highMillis(), b.highMillis(), 0.0, w.toString());
                assertEquals(a.breakdown(), b.breakdown(), w.toString());
                assertEquals(a.warnings(), b.warnings(), w.toString());
            }
        }
    }

    /** A calibration on no runs changes nothing: the predictor itself, its provenance naming no calibration. */
    @Test
    void calibratingOnNoRunsChangesNothing() {
        RuntimePredictor same = fitted().calibrate(List.of());
        assertEquals(fitted().provenance(), same.provenance());
        for (Workload w : workloads()) {
            assertEquals(fitted().predictMillis(w), same.predictMillis(w), 0.0, w.toString());
        }
    }

    @Test
    void theSameSamplesAndSeedGiveTheSameModel() {
        String a = withoutTimestamp(trainer().fit(samples()).toBytes());
        String b = withoutTimestamp(trainer().fit(samples()).toBytes());
        assertEquals(a, b);
    }

    private static String withoutTimestamp(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8).replaceAll("\"created_at\" : \"[^\"]*\"", "")
                .replaceAll("\"sha256\" : \"[0-9a-f]*\"", "");
    }

    /** The bundled catalog, for subclasses. */
    protected static DeviceCatalog catalog() {
        return DeviceCatalog.bundled();
    }
}
