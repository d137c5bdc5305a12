package org.scaledl.workload;

import java.util.Locale;
import org.scaledl.InvalidInputException;

/**
 * How a framework lays out the activations of an imported graph's convolutions in memory, and what the layout costs a
 * convolution on a GPU whose fast kernels want the channels last.
 *
 * <p>An ONNX graph (and PyTorch's default, {@code torch.contiguous_format}) stores a feature map as {@link #NCHW}:
 * each channel's plane whole. Tensor-core convolution kernels read tiles of {@link #CHANNELS_LAST} (NHWC) tensors, so
 * a channels-first convolution in a precision with matrix units is transposed around, or run by slower kernels.
 * Measured on one H200 (cuDNN 9, PyTorch 2.11; {@code datasets/h200/large_batch}, ResNet-50 at batch 256 and 64,
 * training and inference, each layout in two shuffled passes): NCHW took 1.4–1.95× the channels-last time in BF16
 * and FP16 and 1.25–1.42× in TF32, cuDNN's autotuning moving neither by more than 1 %. With the convolutions'
 * share of the bundled layer model's prediction at batch 256 (39 % of inference, 12 % and 30 % of training in the
 * forward and backward convolutions), that is a dense convolution's forward pass taking {@value #HALF_FORWARD}× and
 * its backward pass {@value #HALF_BACKWARD}× its channels-last time in 16 bits ({@value #TF32_FORWARD}× and
 * {@value #TF32_BACKWARD}× in TF32): the means of BF16's and FP16's figures, the backward's taken from training with
 * the forward's from inference. The layer model's convolutions are channels-last as this H200 runs them (within
 * −33…+11 % of its ResNet-50 runs), so {@link #CHANNELS_LAST} is charged nothing.
 *
 * <p>Charged on GPUs of the generations measured and their successor ({@link Device#tensorMemoryAccelerator()}:
 * Hopper, Blackwell), in BF16, FP16 and TF32 on matrix units, for convolutions of one group; not for grouped or
 * depthwise convolutions (memory-bound, no matrix units), not in FP32 (CUDA cores read NCHW natively), not on older
 * GPUs (not measured; the kernel data the layer model learned from has their convolutions in NCHW already).
 *
 * <pre>{@code
 * Workload w = Workload.builder(resnet).memoryFormat(MemoryFormat.parse("channels_last")).build();
 * MemoryFormat.NCHW.slowdown(features, Precision.BF16, h200, true);    // 3.6 for a dense convolution's backward
 * }</pre>
 */
public enum MemoryFormat {
    /** Channels first (NCHW): ONNX's layout and PyTorch's default. */
    NCHW,
    /** Channels last (NHWC): {@code model.to(memory_format=torch.channels_last)}, NVIDIA's training recipes. */
    CHANNELS_LAST;

    /** A dense convolution's forward time in NCHW over its channels-last time, BF16 and FP16. */
    public static final double HALF_FORWARD = 2.15;
    /** A dense convolution's backward time (data and weight gradients) in NCHW over channels-last, BF16 and FP16. */
    public static final double HALF_BACKWARD = 3.6;
    /** A dense convolution's forward time in NCHW over its channels-last time, TF32. */
    public static final double TF32_FORWARD = 1.67;
    /** A dense convolution's backward time in NCHW over its channels-last time, TF32. */
    public static final double TF32_BACKWARD = 2.14;

    /** Lower-case name as used in CSV files and on the command line: {@code nchw}, {@code channels_last}. */
    public String label() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The factor on a layer's time in this format: 1 for channels-last, a layer other than a convolution of one group,
     * a GPU without a tensor memory accelerator, and a precision other than BF16, FP16 and TF32 on matrix units.
     *
     * @param runs the precision the device runs the layer's matrix work in ({@link Device#runs})
     */
    public double slowdown(LayerFeatures f, Precision runs, Device device, boolean backward) {
        if (this == CHANNELS_LAST || f.family() != OpFamily.CONV || f.groups() > 1) {
            return 1;
        }
        boolean half = runs == Precision.BF16 || runs == Precision.FP16;
        if (!half && runs != Precision.TF32 || !device.tensorMemoryAccelerator() || !device.matrixUnits(runs)) {
            return 1;
        }
        if (half) {
            return backward ? HALF_BACKWARD : HALF_FORWARD;
        }
        return backward ? TF32_BACKWARD : TF32_FORWARD;
    }

    /**
     * Parses {@code nchw} (also {@code channels_first}, {@code contiguous}, {@code contiguous_format}) or
     * {@code channels_last} (also {@code nhwc}), in any case, {@code -} for {@code _}; an empty text is NCHW.
     *
     * @throws InvalidInputException naming the text and the accepted values
     */
    public static MemoryFormat parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT).replace('-', '_');
        return switch (t) {
            case "", "nchw", "channels_first", "contiguous", "contiguous_format" -> NCHW;
            case "channels_last", "nhwc" -> CHANNELS_LAST;
            default -> throw InvalidInputException.of("unknown memory format '"
                    + InvalidInputException.printable(text, 80)
                    + "' (expected nchw or channels_last)");
        };
    }
}
