package org.scaledl.onnx;

/**
 * The work of one import, counted in elementary steps, and the budget of the work that is optional: the values of
 * small tensors propagated while inferring shapes. Counted: a step per byte parsed, per dimension of every tensor a
 * node reads or writes (at each batch size inferred), per element of a propagated value times its rank, and per
 * tensor reference when the graph is assembled. The value budget grows with the file's size
 * ({@value #BASE_VALUE_BUDGET} steps plus {@value #VALUE_BUDGET_PER_BYTE} a byte, per batch size inferred); once it is
 * spent, the remaining nodes are inferred from shapes alone, so a file that makes every node recompute a large
 * constant cannot make the import superlinear. Real exports spend a small fraction of it.
 */
final class ImportWork {
    static final long BASE_VALUE_BUDGET = 1L << 22;
    static final long VALUE_BUDGET_PER_BYTE = 4;

    private final long valueBudget;
    private long steps;
    private long valueSpent;

    ImportWork(long fileBytes) {
        this.valueBudget = BASE_VALUE_BUDGET + VALUE_BUDGET_PER_BYTE * fileBytes;
        this.steps = fileBytes;
    }

    /** Counts {@code n} steps of required work. */
    void step(long n) {
        steps += n;
    }

    /** Starts the value budget of a new inference run (one batch size). */
    void newRun() {
        valueSpent = 0;
    }

    /** True when the value work fits the budget of this run, which it is then charged; false when spent. */
    boolean chargeValues(long n) {
        if (n > valueBudget - valueSpent) {
            valueSpent = valueBudget;
            return false;
        }
        valueSpent += n;
        steps += n;
        return true;
    }

    /** Charges value work already done (the values a node produced), even past the budget. */
    void spentValues(long n) {
        valueSpent = Math.min(valueBudget, valueSpent + n);
        steps += n;
    }

    /** Steps counted so far. */
    long steps() {
        return steps;
    }
}
