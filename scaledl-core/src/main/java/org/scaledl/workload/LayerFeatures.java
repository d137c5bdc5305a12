package org.scaledl.workload;

/**
 * The cost features of one layer for a concrete batch size and phase. FLOPs count a multiply-accumulate as
 * <b>2 FLOPs</b> (a k×k convolution output costs {@code 2·k²·C_in/groups}); element-wise operators count one FLOP per
 * output element; views and shape arithmetic count none. Bytes are tensor sizes in memory (element size × elements).
 *
 * @param layer          index of the layer in {@link org.scaledl.graph.ModelGraph#layers()}
 * @param family         operator family
 * @param flopsFwd       forward FLOPs
 * @param flopsBwd       backward FLOPs (0 in inference and where no gradient flows)
 * @param bytesRead      forward bytes read (activations and weights)
 * @param bytesWritten   forward bytes written
 * @param bytesBwd       backward bytes moved (output gradient read, input gradients written, saved inputs read)
 * @param params         trainable parameters first read by this layer (a weight tied to an earlier layer's is that
 *                       layer's; the Megatron execution times a layer with every weight it reads,
 *                       {@code ModelGraph.weightsRead})
 * @param outputElements elements of the outputs
 * @param kernel         elements of the kernel window (convolutions, pools), else 0
 * @param stride         largest stride (convolutions, pools), else 0
 * @param groups         convolution groups; for a batched product (MatMul whose second operand has batch dimensions,
 *                       an attention core's), its right-hand operands; else 0
 * @param inChannels     input channels (convolutions), reduction length K (dense), or the length a statistic or
 *                       reduction runs over (normalisations, softmax, reductions), else 0
 * @param outChannels    output channels (convolutions) or N (dense), else 0
 * @param steps          operations the layer runs one after another: the time steps times directions of a
 *                       recurrent cell (each a small contraction the framework dispatches), 1 for every other layer
 */
public record LayerFeatures(int layer, OpFamily family, double flopsFwd, double flopsBwd, double bytesRead,
        double bytesWritten, double bytesBwd, long params, double outputElements, long kernel, long stride,
        long groups, long inChannels, long outChannels, long steps) {

    /** A layer that runs as one operation. */
    public LayerFeatures(int layer, OpFamily family, double flopsFwd, double flopsBwd, double bytesRead,
            double bytesWritten, double bytesBwd, long params, double outputElements, long kernel, long stride,
            long groups, long inChannels, long outChannels) {
        this(layer, family, flopsFwd, flopsBwd, bytesRead, bytesWritten, bytesBwd, params, outputElements, kernel,
                stride, groups, inChannels, outChannels, 1);
    }

    // written out: a record's generated equals and hashCode are linked through method handles on first use, which
    // costs a cold JVM milliseconds per record class (the start-up of one prediction); RecordEqualityTest checks them
    @Override
    public boolean equals(Object o) {
        return o instanceof LayerFeatures f && layer == f.layer && family == f.family
                && Double.compare(flopsFwd, f.flopsFwd) == 0 && Double.compare(flopsBwd, f.flopsBwd) == 0
                && Double.compare(bytesRead, f.bytesRead) == 0 && Double.compare(bytesWritten, f.bytesWritten) == 0
                && Double.compare(bytesBwd, f.bytesBwd) == 0 && params == f.params
                && Double.compare(outputElements, f.outputElements) == 0 && kernel == f.kernel && stride == f.stride
                && groups == f.groups && inChannels == f.inChannels && outChannels == f.outChannels
                && steps == f.steps;
    }

    @Override
    public int hashCode() {
        int h = 31 * layer + java.util.Objects.hashCode(family);
        h = 31 * h + Double.hashCode(flopsFwd);
        h = 31 * h + Double.hashCode(flopsBwd);
        h = 31 * h + Double.hashCode(bytesRead);
        h = 31 * h + Double.hashCode(bytesWritten);
        h = 31 * h + Double.hashCode(bytesBwd);
        h = 31 * h + Long.hashCode(params);
        h = 31 * h + Double.hashCode(outputElements);
        h = 31 * h + Long.hashCode(kernel);
        h = 31 * h + Long.hashCode(stride);
        h = 31 * h + Long.hashCode(groups);
        h = 31 * h + Long.hashCode(inChannels);
        h = 31 * h + Long.hashCode(outChannels);
        return 31 * h + Long.hashCode(steps);
    }

    /** Forward bytes read plus written. */
    public double bytesFwd() {
        return bytesRead + bytesWritten;
    }

    /** Forward FLOPs per forward byte (0 when no bytes move). */
    public double arithmeticIntensity() {
        double b = bytesFwd();
        return b == 0 ? 0 : flopsFwd / b;
    }

    /**
     * True when the layer is dispatched as an operator in this phase: shape arithmetic is not (eager frameworks
     * compute it on host integers) and neither is Dropout in inference; views are (they cost bookkeeping).
     */
    public boolean executes() {
        return family != OpFamily.SHAPE && (family == OpFamily.VIEW || flopsFwd > 0 || bytesFwd() > 0);
    }
}
