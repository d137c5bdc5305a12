package org.scaledl.graph;

import java.util.Collections;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Supplier;
import org.scaledl.Checks;

/**
 * The one bounded cache of per-graph analyses: values keyed by a graph (by identity, held weakly, so an entry dies
 * with its graph or with the cache) and by a key that must hold <em>everything else</em> the value depends on (batch,
 * phase, device, precision...). Each graph keeps at most {@code maxPerGraph} values; past that the oldest goes.
 * Values must be deterministic functions of (graph, key): then what was asked before never changes an answer.
 * Thread-safe; two threads that miss at once may both compute (one value stays).
 *
 * <pre>{@code
 * GraphCache<Key, Double> sums = new GraphCache<>(1024);
 * double s = sums.get(graph, new Key(batch, phase, device), () -> computeSum(graph, batch, phase, device));
 * }</pre>
 *
 * @param <K> the key type (a record of every input other than the graph)
 * @param <V> the cached value
 */
public final class GraphCache<K, V> {
    private final int maxPerGraph;
    private final Map<ModelGraph, Entries<K, V>> byGraph = Collections.synchronizedMap(new WeakHashMap<>());

    /**
     * A cache keeping up to {@code maxPerGraph} values per graph.
     *
     * @throws IllegalArgumentException unless positive
     */
    public GraphCache(int maxPerGraph) {
        Checks.argument(maxPerGraph > 0, "cache size must be positive: %s", maxPerGraph);
        this.maxPerGraph = maxPerGraph;
    }

    private static final class Entries<K, V> {
        final ConcurrentHashMap<K, V> values = new ConcurrentHashMap<>();
        final ConcurrentLinkedQueue<K> order = new ConcurrentLinkedQueue<>();
    }

    /** The value for a graph and key, computed (outside any lock) on a miss. */
    public V get(ModelGraph graph, K key, Supplier<V> compute) {
        Entries<K, V> e = byGraph.computeIfAbsent(graph, g -> new Entries<>());
        V v = e.values.get(key);
        if (v != null) {
            return v;
        }
        V computed = compute.get();
        V previous = e.values.putIfAbsent(key, computed);
        if (previous != null) {
            return previous;
        }
        e.order.add(key);
        while (e.values.size() > maxPerGraph) {
            K oldest = e.order.poll();
            if (oldest == null) {
                break;
            }
            e.values.remove(oldest);
        }
        return computed;
    }

    /** Values held for a graph (for tests of the bound). */
    public int size(ModelGraph graph) {
        Entries<K, V> e = byGraph.get(graph);
        return e == null ? 0 : e.values.size();
    }
}
