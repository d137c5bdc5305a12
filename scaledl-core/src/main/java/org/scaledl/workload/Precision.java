package org.scaledl.workload;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import org.scaledl.InvalidInputException;

/**
 * The arithmetic a workload runs in, as frameworks run it, and what it costs in memory: each constant carries the
 * bytes a parameter and an activation take, the matrix peak its contractions run at (the catalog column of that name,
 * {@link Device#matrixPeak(String)}), the precision a GPU without those matrix units falls back to, and the memory
 * traffic of its scaling.
 *
 * <ul>
 *   <li>{@link #FP32}: single precision everywhere; on NVIDIA Ampere and later, matrix work on the FP32 units
 *       (TF32 off).</li>
 *   <li>{@link #TF32}: tensors in FP32, matrix work on the tensor cores in TF32 (PyTorch's {@code allow_tf32}).</li>
 *   <li>{@link #FP16}, {@link #BF16}: <em>mixed</em> precision (PyTorch {@code autocast}, Megatron {@code --fp16} /
 *       {@code --bf16}): matrix work and activations in half precision, FP32 master weights, gradients and Adam
 *       states (Narayanan et al.: 2 + 4 + 4 + 8 bytes a parameter), the data-parallel reduction moving the
 *       gradients in their buffers' type; a job's buffers are {@link Workload#sixteenBitGradients()}'s: 16 bits in
 *       FP16 training unless it says otherwise (Megatron-LM, DeepSpeed), FP32 in BF16 unless it says otherwise
 *       ({@link #gradientBytes()} is the FP32 buffer's).</li>
 *   <li>{@link #FP8} (per-tensor scaling, delayed or current), {@link #FP8_BLOCK} (blockwise 1×128 / 128×128
 *       scaling), {@link #MXFP8} (32-element blocks with E8M0 scales) and {@link #NVFP4} (16-element blocks of
 *       E2M1 with E4M3 scales): Transformer Engine's recipes. The linear layers of the blocks (projections, MLP,
 *       experts) run on the low-precision matrix units; the attention core, the output layer and everything else
 *       stay in BF16, as do the weights and the activations between layers; each
 *       linear layer's operands are quantised (amax, cast, transpose: {@link #scalingBytesPerElement(Device)} of
 *       memory traffic per element), and the quantised weights are kept between micro-batches
 *       ({@link #quantisedWeightBytes(Device)}). A GPU whose FP8 products take either layout (Blackwell's
 *       data-centre parts: {@link Device#fp8EitherLayout()}) keeps no transposed copy of a tensor scaled per
 *       tensor.</li>
 * </ul>
 *
 * A graph exported in FP32 is predicted at any precision: the device model takes the precision's peak for matrix work
 * and its element size for the bytes activations move. Adding a precision is one constant here and one
 * {@code <peak>_TFLOPS} column in the device catalog.
 *
 * <pre>{@code
 * Workload w = Workload.builder(g).precision(Precision.parse("bf16")).build();
 * Precision.parse("nvfp4").peakColumn();     // "fp4": the catalog column fp4_TFLOPS
 * Precision.NVFP4.fallback();                // Optional[MXFP8]: what a GPU without FP4 units runs
 * Precision.BF16.fallback();                 // empty: a GPU without BF16 units cannot run it
 * }</pre>
 */
public enum Precision {
    /** FP32 everywhere. */
    FP32("fp32", "fp32", 4, 4, 4, 0, 8, 0, 0, null, false),
    /** FP32 tensors, TF32 tensor-core matrix work. */
    TF32("tf32", "tf32", 4, 4, 4, 0, 8, 0, 0, FP32, false),
    /** Mixed precision with FP16 matrix work and activations. */
    FP16("fp16", "fp16", 2, 2, 4, 4, 8, 0, 0, FP32, false),
    /** Mixed precision with BF16 matrix work and activations. */
    BF16("bf16", "bf16", 2, 2, 4, 4, 8, 0, 0, null, false),
    /** FP8 linear layers with per-tensor scaling (delayed or current), BF16 elsewhere. */
    FP8("fp8", "fp8", 2, 2, 4, 4, 8, 2, 5, null, true),
    /** FP8 linear layers with blockwise scaling (1×128 activations, 128×128 weights), BF16 elsewhere. */
    FP8_BLOCK("fp8-block", "fp8", 2, 2, 4, 4, 8, 2.06, 4.06, FP8, true),
    /** MXFP8 linear layers (32-element blocks, E8M0 scales), BF16 elsewhere. */
    MXFP8("mxfp8", "mxfp8", 2, 2, 4, 4, 8, 2.06, 4.06, FP8_BLOCK, true),
    /** NVFP4 linear layers (16-element blocks of E2M1, E4M3 scales), BF16 elsewhere. */
    NVFP4("nvfp4", "fp4", 2, 2, 4, 4, 8, 1.13, 3.63, MXFP8, true);

    private final String label;
    private final String peakColumn;
    private final int activationBytes;
    private final double weightBytes;
    private final double gradientBytes;
    private final double masterBytes;
    private final double optimizerStateBytes;
    private final double quantisedWeightBytes;
    private final double scalingBytesPerElement;
    private final Precision fallback;
    private final boolean lowPrecisionLinear;

    Precision(String label, String peakColumn, int activationBytes, double weightBytes, double gradientBytes,
            double masterBytes, double optimizerStateBytes, double quantisedWeightBytes,
            double scalingBytesPerElement, Precision fallback, boolean lowPrecisionLinear) {
        this.label = label;
        this.peakColumn = peakColumn;
        this.activationBytes = activationBytes;
        this.weightBytes = weightBytes;
        this.gradientBytes = gradientBytes;
        this.masterBytes = masterBytes;
        this.optimizerStateBytes = optimizerStateBytes;
        this.quantisedWeightBytes = quantisedWeightBytes;
        this.scalingBytesPerElement = scalingBytesPerElement;
        this.fallback = fallback;
        this.lowPrecisionLinear = lowPrecisionLinear;
    }

    /** Bytes of one activation element (2 in mixed precision, else 4). */
    public int activationBytes() {
        return activationBytes;
    }

    /** True for the mixed-precision modes (half-precision activations, FP32 master weights). */
    public boolean isMixed() {
        return masterBytes > 0;
    }

    /** Bytes of the working copy of a parameter (the weights the forward pass reads). */
    public double weightBytes() {
        return weightBytes;
    }

    /** Bytes of a parameter's gradient buffer (FP32: Megatron's main gradients, PyTorch's FP32 parameters). */
    public double gradientBytes() {
        return gradientBytes;
    }

    /** Bytes of a parameter's FP32 master copy (0 when the weights themselves are FP32). */
    public double masterBytes() {
        return masterBytes;
    }

    /** Bytes of a parameter's optimizer states (Adam's two FP32 moments). */
    public double optimizerStateBytes() {
        return optimizerStateBytes;
    }

    /**
     * Whether training in this precision keeps 16-bit gradient buffers unless told otherwise: FP16 (Megatron-LM
     * without {@code --accumulate-allreduce-grads-in-fp32}, DeepSpeed); every other precision keeps FP32 ones
     * ({@link Workload#sixteenBitGradients()}).
     */
    public boolean sixteenBitGradientsByDefault() {
        return this == FP16;
    }

    /** Bytes per parameter of the optimizer's own states (master copy and moments), what ZeRO stage 1 shards. */
    public double stateBytes() {
        return masterBytes + optimizerStateBytes;
    }

    /**
     * Bytes of memory traffic of one Adam step per parameter: the master copy (or the weights) and both moments read
     * and written, the gradient read, and the half-precision weights written where there is a master copy
     * (30 in mixed precision, 28 in FP32).
     */
    public double optimizerTrafficBytes() {
        return optimizerTrafficBytes(gradientBytes, true);
    }

    /**
     * {@link #optimizerTrafficBytes()} with gradients of {@code gradientBytes} (16-bit gradient buffers read 2), and
     * without the half-precision weights' write where {@code writesHalfCopy} is false (FSDP updates its sharded FP32
     * parameters, the 16-bit weights being cast when gathered).
     */
    public double optimizerTrafficBytes(double gradientBytes, boolean writesHalfCopy) {
        double master = masterBytes > 0 ? masterBytes : weightBytes;
        return 2 * master + 2 * optimizerStateBytes + gradientBytes
                + (masterBytes > 0 && writesHalfCopy ? weightBytes : 0);
    }

    /**
     * Bytes per parameter of the quantised weights kept between micro-batches on {@code device}: the copy the
     * forward products read and, where the backward products need another, that one too (the transposed copy of a
     * per-tensor-scaled FP8 tensor on a GPU that takes FP8 operands only in the TN layout; the column-wise copy of the
     * block-scaled recipes, whose scales run along the other dimension, everywhere). 0 without low-precision linear
     * layers.
     */
    public double quantisedWeightBytes(Device device) {
        return quantisedWeightBytes / 2 * quantisedCopies(device);
    }

    /**
     * Bytes of one element of one quantised copy of an operand (1 in FP8, with the block scales' share in the
     * block-scaled recipes: 1.03 in MX-FP8, 0.56 in NVFP4): the width a low-precision product reads. 0 without
     * low-precision linear layers.
     */
    public double quantisedElementBytes() {
        return quantisedWeightBytes / 2;
    }

    /**
     * Memory traffic of quantising one operand element of a low-precision linear layer on {@code device} (amax,
     * cast, and the cast's second copy where {@link #quantisedWeightBytes(Device)} keeps one, with its scales),
     * bytes; 0 for precisions without scaling.
     */
    public double scalingBytesPerElement(Device device) {
        return scalingBytesPerElement - (2 - quantisedCopies(device)) * quantisedElementBytes();
    }

    /** How many quantised copies of a tensor the backward pass needs on {@code device} (2, or 1: see above). */
    private int quantisedCopies(Device device) {
        java.util.Objects.requireNonNull(device, "device");
        return this == FP8 && device.fp8EitherLayout() ? 1 : 2;
    }

    /** Whether the blocks' linear layers run on low-precision matrix units (FP8, FP4) with the rest in BF16. */
    public boolean lowPrecisionLinear() {
        return lowPrecisionLinear;
    }

    /**
     * The precision of the layers that stay in high precision (attention core, output layer, norms): BF16 for the
     * low-precision recipes, the precision itself otherwise.
     */
    public Precision highPrecision() {
        return lowPrecisionLinear ? BF16 : this;
    }

    /** The device catalog's matrix-peak column for this precision ({@code <column>_TFLOPS}). */
    public String peakColumn() {
        return peakColumn;
    }

    /**
     * What a GPU without this precision's matrix units runs instead, as frameworks fall back: TF32 and FP16 to FP32
     * (their matrix work then runs on the FP32 units), NVFP4 to MXFP8 to blockwise FP8 to per-tensor FP8 (in
     * inference only: Transformer Engine trains a recipe only on its own units, and a training job is refused there,
     * {@code ParallelExecution.checkPrecision}). Empty for FP32 and where frameworks refuse: BF16 without BF16 units,
     * FP8 without FP8 units.
     */
    public Optional<Precision> fallback() {
        return Optional.ofNullable(fallback);
    }

    /** Lower-case name as used in CSV files and on the command line. */
    public String label() {
        return label;
    }

    /** Every label {@link #parse} accepts as a canonical name. */
    public static List<String> labels() {
        List<String> out = new ArrayList<>();
        for (Precision p : values()) {
            out.add(p.label);
        }
        return List.copyOf(out);
    }

    /**
     * Parses {@code fp32}, {@code tf32}, {@code fp16} (also {@code amp}), {@code bf16},
     * {@code fp8} (also {@code fp8-cs}, {@code fp8-delayed}, {@code fp8-tensorwise}), {@code fp8-block} (also
     * {@code fp8-blockwise}, {@code fp8-sc}), {@code mxfp8} (also {@code fp8-mx}) or {@code nvfp4} (also
     * {@code fp4}), in any case ({@code float32}, {@code float16}, {@code bfloat16} too), and PyTorch Lightning's
     * precision flags as NeMo's configurations give them ({@code bf16-mixed}, {@code 16-mixed}, {@code 16},
     * {@code 32-true}, {@code 32}). Lightning's 16-bit {@code -true} flags (weights and optimizer states in 16 bits,
     * no FP32 master copy) are refused, naming the mixed precision whose step this library predicts instead: its
     * 16-bit precisions keep FP32 master weights, so it would count their memory where such a job has none; so is
     * {@code half} ({@code model.half()}'s pure 16-bit training), and {@code mixed}, which names no 16-bit type, is
     * refused naming the types. {@code amp} and Lightning's {@code 16-mixed} are FP16 with the precision's default
     * gradient buffers (16 bits, as Megatron-LM keeps them): PyTorch's autocast keeps FP32 ones, so give
     * {@code --grad-dtype fp32} (a table's {@code grad_dtype}) for such a job.
     *
     * @throws InvalidInputException naming the text and the accepted values
     */
    public static Precision parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT).replace('_', '-');
        return switch (t) {
            case "fp32", "float32", "float", "single", "32", "32-true" -> FP32;
            case "tf32" -> TF32;
            case "fp16", "float16", "amp", "16", "16-mixed" -> FP16;
            case "bf16", "bfloat16", "bf16-mixed" -> BF16;
            case "16-true", "bf16-true", "half" -> throw InvalidInputException.of("precision '" + t + "' (16-bit "
                    + "weights and optimizer states, no FP32 master copy" + (t.equals("half") ? ", as model.half() "
                    + "trains" : "") + ") is not modelled: " + (t.startsWith("bf") ? "bf16" : "fp16") + " predicts "
                    + "the same step in mixed precision, whose FP32 master weights it counts in memory");
            case "mixed" -> throw InvalidInputException.of("precision 'mixed' names no 16-bit type: give fp16 or "
                    + "bf16 (mixed precision, FP32 master weights), or fp8, mxfp8, nvfp4");
            case "fp8", "fp8-cs", "fp8-delayed", "fp8-tensorwise", "fp8-current", "float8" -> FP8;
            case "fp8-block", "fp8-blockwise", "fp8-sc", "fp8-subchannel" -> FP8_BLOCK;
            case "mxfp8", "fp8-mx" -> MXFP8;
            case "nvfp4", "fp4" -> NVFP4;
            default -> throw InvalidInputException.of("unknown precision '"
                    + InvalidInputException.printable(text, 80) + "' (expected "
                    + String.join(", ", labels()) + ")");
        };
    }
}
