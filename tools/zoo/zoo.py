#!/usr/bin/env python3
"""The import zoo: real architectures exported to ONNX, an independent reference from ONNX Runtime, and a checker.

    zoo.py export OUT [--only ID ...] [--list]     export every architecture in two styles, record the reference
    zoo.py check OUT --jar scaledl.jar [--md F]   run `scaledl inspect` on every file, compare, print the table

Export styles (both with a symbolic batch dimension unless the variant says otherwise):
  train  graph-only (export_params=False), training mode, opset 13, no constant folding: the dataset format
  eval   weights as initializers, eval mode, opset 17, constant folding: what most users export

Sequence models are exported with a symbolic sequence length too ("seq"), as transformer exports usually are;
the checker binds it with --dim seq=64. A few architectures are also exported as "eval-fixed": without
dynamic_axes (the torch.onnx.export default), so the batch dimension is a fixed number.

The reference is ONNX Runtime: every node output is made a graph output, the graph is run on random inputs at
batch 2 (weights that are graph inputs get random values), and each tensor's shape is taken from the run. Forward
FLOPs of Conv, ConvTranspose, Gemm and MatMul are counted from those shapes, 2 per multiply-accumulate. The
importer adds one FLOP per output element for a bias (Conv with a bias input, Gemm with C); the checker adds the
same to the reference, so that convention is the only difference allowed. Parameters: PyTorch's
sum(p.numel() for p in model.parameters() if p.requires_grad) for the training style (graph-only: every parameter is
a graph input). An eval export with constant folding no longer holds PyTorch's parameters: BatchNorm's scale and
shift are folded into the preceding convolution (which gains a bias), gathered tables become constants of another
size, standardised weights are stored twice. For it the reference is the graph's own parameter count, computed here
from the file with the onnx package (floating initializers of rank >= 1, BatchNorm running statistics excluded),
and the table also gives the ratio to PyTorch's. Weights get a little noise before export, since the exporter
stores equal initializers once and random initialisation makes every LayerNorm weight equal.

Needs torch (Debian's python3-torch 1.13 works), torchvision, timm 1.0, onnx and onnxruntime. The export runs for
tens of minutes on two cores; it skips models whose reference already exists, so it can be resumed.
"""
import argparse
import json
import os
import subprocess
import sys
import time
import traceback

IMAGE = 112

# (id, source, name, options). Sources: timm, tv (torchvision.models), tvseg (torchvision.models.segmentation),
# tvvideo (torchvision.models.video), seq (defined below). Options: size (input side), img_size (passed to timm),
# variants (extra export variants).
MODELS = [
    # timm: convolutional networks
    ("resnet18", "timm", "resnet18", {}),
    ("resnet50d", "timm", "resnet50d", {"variants": ["fixed"]}),
    ("resnext26ts", "timm", "resnext26ts", {}),
    ("seresnext26d_32x4d", "timm", "seresnext26d_32x4d", {}),
    ("ecaresnet26t", "timm", "ecaresnet26t", {}),
    ("skresnet18", "timm", "skresnet18", {}),
    ("resnest14d", "timm", "resnest14d", {}),
    ("res2net50_14w_8s", "timm", "res2net50_14w_8s", {}),
    ("resnetv2_18", "timm", "resnetv2_18", {}),
    ("resnetrs50", "timm", "resnetrs50", {}),
    ("regnetx_002", "timm", "regnetx_002", {}),
    ("regnety_002", "timm", "regnety_002", {}),
    ("regnetz_005", "timm", "regnetz_005", {}),
    ("densenet121", "timm", "densenet121", {}),
    ("dla34", "timm", "dla34", {"size": 128}),
    ("dpn48b", "timm", "dpn48b", {}),
    ("hrnet_w18_small", "timm", "hrnet_w18_small", {"size": 128}),
    ("cspresnet50", "timm", "cspresnet50", {}),
    ("cs3darknet_s", "timm", "cs3darknet_s", {}),
    ("darknet17", "timm", "darknet17", {}),
    ("vovnet39a", "timm", "vovnet39a", {}),
    ("ese_vovnet19b_dw", "timm", "ese_vovnet19b_dw", {}),
    ("selecsls42b", "timm", "selecsls42b", {}),
    ("gernet_s", "timm", "gernet_s", {}),
    ("xception41", "timm", "xception41", {}),
    ("inception_v3", "timm", "inception_v3", {"size": 160}),
    ("tresnet_m", "timm", "tresnet_m", {}),
    ("nf_resnet26", "timm", "nf_resnet26", {}),
    ("gcresnet33ts", "timm", "gcresnet33ts", {}),
    ("eca_resnext26ts", "timm", "eca_resnext26ts", {}),
    ("legacy_seresnet18", "timm", "legacy_seresnet18", {}),
    ("vgg11_bn", "timm", "vgg11_bn", {"size": 224}),
    ("hgnetv2_b0", "timm", "hgnetv2_b0", {}),
    ("convnext_atto", "timm", "convnext_atto", {}),
    ("convnextv2_atto", "timm", "convnextv2_atto", {}),
    ("inception_next_atto", "timm", "inception_next_atto", {}),
    ("rdnet_tiny", "timm", "rdnet_tiny", {}),
    # timm: mobile networks
    ("mobilenetv2_050", "timm", "mobilenetv2_050", {}),
    ("mobilenetv3_small_050", "timm", "mobilenetv3_small_050", {}),
    ("mobilenetv4_conv_small", "timm", "mobilenetv4_conv_small", {}),
    ("mnasnet_small", "timm", "mnasnet_small", {}),
    ("fbnetc_100", "timm", "fbnetc_100", {}),
    ("efficientnet_b0", "timm", "efficientnet_b0", {}),
    ("efficientnet_lite0", "timm", "efficientnet_lite0", {}),
    ("tf_efficientnetv2_b0", "timm", "tf_efficientnetv2_b0", {}),
    ("mixnet_s", "timm", "mixnet_s", {}),
    ("tinynet_e", "timm", "tinynet_e", {}),
    ("lcnet_050", "timm", "lcnet_050", {}),
    ("hardcorenas_a", "timm", "hardcorenas_a", {}),
    ("ghostnet_100", "timm", "ghostnet_100", {}),
    ("ghostnetv2_100", "timm", "ghostnetv2_100", {}),
    ("repghostnet_050", "timm", "repghostnet_050", {}),
    ("rexnet_100", "timm", "rexnet_100", {}),
    ("mobileone_s0", "timm", "mobileone_s0", {}),
    ("repvgg_a0", "timm", "repvgg_a0", {}),
    ("repvit_m1", "timm", "repvit_m1", {}),
    ("starnet_s1", "timm", "starnet_s1", {}),
    ("mambaout_femto", "timm", "mambaout_femto", {}),
    # timm: hybrids and efficient attention
    ("mobilevit_xxs", "timm", "mobilevit_xxs", {"size": 128}),
    ("mobilevitv2_050", "timm", "mobilevitv2_050", {"size": 128}),
    ("edgenext_xx_small", "timm", "edgenext_xx_small", {"size": 128}),
    ("efficientformer_l1", "timm", "efficientformer_l1", {"size": 224}),
    ("efficientformerv2_s0", "timm", "efficientformerv2_s0", {"size": 224}),
    ("efficientvit_b0", "timm", "efficientvit_b0", {}),
    ("efficientvit_m0", "timm", "efficientvit_m0", {"size": 224}),
    ("levit_128s", "timm", "levit_128s", {"size": 224}),
    ("fastvit_t8", "timm", "fastvit_t8", {"size": 128}),
    ("swiftformer_xs", "timm", "swiftformer_xs", {"size": 224}),
    ("coatnet_nano_rw_224", "timm", "coatnet_nano_rw_224", {"size": 224}),
    ("maxvit_nano_rw_256", "timm", "maxvit_nano_rw_256", {"size": 128, "img_size": 128}),
    ("tiny_vit_5m_224", "timm", "tiny_vit_5m_224", {"size": 224}),
    ("botnet26t_256", "timm", "botnet26t_256", {"size": 128, "img_size": 128}),
    ("cspdarknet53", "timm", "cspdarknet53", {"size": 128}),
    ("lambda_resnet26t", "timm", "lambda_resnet26t", {"size": 128, "img_size": 128}),
    ("visformer_tiny", "timm", "visformer_tiny", {"img_size": IMAGE}),
    ("gcvit_xxtiny", "timm", "gcvit_xxtiny", {"size": 224}),
    # timm: vision transformers
    ("vit_tiny_patch16_224", "timm", "vit_tiny_patch16_224", {"img_size": IMAGE, "variants": ["fixed"]}),
    ("vit_small_patch16_224", "timm", "vit_small_patch16_224", {"img_size": IMAGE}),
    ("deit_tiny_patch16_224", "timm", "deit_tiny_patch16_224", {"img_size": IMAGE}),
    ("deit3_small_patch16_224", "timm", "deit3_small_patch16_224", {"img_size": IMAGE}),
    ("vit_relpos_small_patch16_224", "timm", "vit_relpos_small_patch16_224", {"img_size": IMAGE}),
    ("beit_base_patch16_224", "timm", "beit_base_patch16_224", {"img_size": IMAGE}),
    ("eva02_tiny_patch14_224", "timm", "eva02_tiny_patch14_224", {"img_size": IMAGE}),
    ("cait_xxs24_224", "timm", "cait_xxs24_224", {"img_size": IMAGE}),
    ("convit_tiny", "timm", "convit_tiny", {"img_size": IMAGE}),
    ("crossvit_tiny_240", "timm", "crossvit_tiny_240", {"size": 240}),
    ("xcit_nano_12_p16_224", "timm", "xcit_nano_12_p16_224", {"img_size": IMAGE}),
    ("pit_ti_224", "timm", "pit_ti_224", {"img_size": IMAGE}),
    ("tnt_s_patch16_224", "timm", "tnt_s_patch16_224", {"img_size": IMAGE}),
    ("twins_svt_small", "timm", "twins_svt_small", {"size": 224}),
    ("twins_pcpvt_small", "timm", "twins_pcpvt_small", {"size": 224}),
    ("pvt_v2_b0", "timm", "pvt_v2_b0", {}),
    ("swin_tiny_patch4_window7_224", "timm", "swin_tiny_patch4_window7_224", {"img_size": IMAGE}),
    ("davit_tiny", "timm", "davit_tiny", {}),
    ("focalnet_tiny_srf", "timm", "focalnet_tiny_srf", {}),
    ("nest_tiny", "timm", "nest_tiny", {"img_size": IMAGE}),
    ("coat_lite_tiny", "timm", "coat_lite_tiny", {"size": 224}),
    ("sebotnet33ts_256", "timm", "sebotnet33ts_256", {"size": 256}),
    ("mvitv2_tiny", "timm", "mvitv2_tiny", {"size": 224}),
    ("hiera_tiny_224", "timm", "hiera_tiny_224", {"size": 224}),
    # timm: MLPs and pooling mixers
    ("mixer_s16_224", "timm", "mixer_s16_224", {"img_size": IMAGE}),
    ("resmlp_12_224", "timm", "resmlp_12_224", {"img_size": IMAGE}),
    ("gmlp_ti16_224", "timm", "gmlp_ti16_224", {"img_size": IMAGE}),
    ("sequencer2d_s", "timm", "sequencer2d_s", {"img_size": IMAGE}),
    ("poolformer_s12", "timm", "poolformer_s12", {}),
    ("poolformerv2_s12", "timm", "poolformerv2_s12", {}),
    ("caformer_s18", "timm", "caformer_s18", {}),
    # torchvision
    ("tv_alexnet", "tv", "alexnet", {"size": 224}),
    ("tv_vgg11", "tv", "vgg11", {"size": 224}),
    ("tv_resnet18", "tv", "resnet18", {}),
    ("tv_resnet50", "tv", "resnet50", {}),
    ("tv_resnext50_32x4d", "tv", "resnext50_32x4d", {}),
    ("tv_wide_resnet50_2", "tv", "wide_resnet50_2", {}),
    ("tv_densenet121", "tv", "densenet121", {}),
    ("tv_squeezenet1_0", "tv", "squeezenet1_0", {}),
    ("tv_squeezenet1_1", "tv", "squeezenet1_1", {}),
    ("tv_googlenet", "tv", "googlenet", {"size": 224, "kwargs": {"aux_logits": False, "init_weights": False}}),
    ("tv_inception_v3", "tv", "inception_v3", {"size": 160, "kwargs": {"aux_logits": False, "init_weights": False}}),
    ("tv_mobilenet_v2", "tv", "mobilenet_v2", {}),
    ("tv_mobilenet_v3_small", "tv", "mobilenet_v3_small", {}),
    ("tv_mobilenet_v3_large", "tv", "mobilenet_v3_large", {}),
    ("tv_shufflenet_v2_x0_5", "tv", "shufflenet_v2_x0_5", {}),
    ("tv_mnasnet0_5", "tv", "mnasnet0_5", {}),
    ("tv_efficientnet_b0", "tv", "efficientnet_b0", {}),
    ("tv_efficientnet_v2_s", "tv", "efficientnet_v2_s", {}),
    ("tv_regnet_x_400mf", "tv", "regnet_x_400mf", {}),
    ("tv_regnet_y_400mf", "tv", "regnet_y_400mf", {}),
    ("tv_convnext_tiny", "tv", "convnext_tiny", {}),
    ("tv_vit_b_16", "tv", "vit_b_16", {"size": 224}),
    ("tv_swin_t", "tv", "swin_t", {}),
    ("tv_maxvit_t", "tv", "maxvit_t", {"size": 224}),
    ("tv_fcn_resnet50", "tvseg", "fcn_resnet50", {"kwargs": {"aux_loss": False, "weights_backbone": None}}),
    ("tv_lraspp_mobilenet_v3_large", "tvseg", "lraspp_mobilenet_v3_large", {"kwargs": {"weights_backbone": None}}),
    ("tv_deeplabv3_mobilenet_v3_large", "tvseg", "deeplabv3_mobilenet_v3_large",
     {"kwargs": {"aux_loss": False, "weights_backbone": None}}),
    ("tv_r3d_18", "tvvideo", "r3d_18", {"video": (8, 64)}),
    # sequence models (plain PyTorch; see SeqModel)
    ("seq_lstm_lm", "seq", "lstm", {}),
    ("seq_gru_bi", "seq", "gru", {}),
    ("seq_gpt_decoder", "seq", "gpt", {}),
    ("seq_bert_encoder", "seq", "bert", {}),
    ("seq_transformer_encdec", "seq", "encdec", {}),
    ("seq_tcn", "seq", "tcn", {}),
    ("conv_autoencoder", "seq", "unet", {}),
]

SEQ_LEN = 64
VOCAB = 5000


def seq_model(kind):
    import torch
    nn = torch.nn

    class SeqModel(nn.Module):
        """Token ids (batch, seq) -> per-token logits (or, for 'unet', an image autoencoder with ConvTranspose)."""

        def __init__(self):
            super().__init__()
            d = 256
            self.kind = kind
            if kind == "unet":
                self.down = nn.Sequential(nn.Conv2d(3, 32, 3, 2, 1), nn.BatchNorm2d(32), nn.ReLU(),
                                          nn.Conv2d(32, 64, 3, 2, 1), nn.BatchNorm2d(64), nn.ReLU())
                self.up = nn.Sequential(nn.ConvTranspose2d(64, 32, 4, 2, 1), nn.ReLU(),
                                        nn.ConvTranspose2d(32, 3, 3, 2, 1, output_padding=1, groups=1))
                return
            self.emb = nn.Embedding(VOCAB, d)
            if kind == "lstm":
                self.body = nn.LSTM(d, d, num_layers=2, batch_first=True)
            elif kind == "gru":
                self.body = nn.GRU(d, d, num_layers=2, batch_first=True, bidirectional=True)
            elif kind in ("gpt", "bert"):
                self.pos = nn.Parameter(torch.zeros(1, 512, d))
                layer = nn.TransformerEncoderLayer(d, 4, 4 * d, dropout=0.1, batch_first=True,
                                                   norm_first=kind == "gpt")
                self.body = nn.TransformerEncoder(layer, 4)
            elif kind == "encdec":
                self.body = nn.Transformer(d, 4, 2, 2, 4 * d, batch_first=True)
            elif kind == "tcn":
                self.body = nn.Sequential(nn.Conv1d(d, d, 3, padding=2, dilation=2), nn.GELU(),
                                          nn.Conv1d(d, d, 3, padding=4, dilation=4), nn.GELU())
            self.head = nn.Linear(2 * d if kind == "gru" else d, VOCAB)

        def forward(self, x):
            if self.kind == "unet":
                return self.up(self.down(x))
            h = self.emb(x)
            if self.kind in ("lstm", "gru"):
                h = self.body(h)[0]
            elif self.kind in ("gpt", "bert"):
                n = x.shape[1]
                h = h + self.pos[:, :n]
                if self.kind == "gpt":
                    i = torch.arange(n)
                    mask = (i[None, :] > i[:, None]).float() * -1e9  # causal, without triu (opset 14)
                    h = self.body(h, mask=mask)
                else:
                    h = self.body(h)
            elif self.kind == "encdec":
                h = self.body(h, h[:, : x.shape[1] // 2])
            else:
                h = self.body(h.transpose(1, 2)).transpose(1, 2)
            return self.head(h)

    return SeqModel()


def build(source, name, opts):
    """The module and its example input spec: ('image', C, H, W), ('video', C, T, H, W) or ('tokens', seq)."""
    import torch
    kwargs = dict(opts.get("kwargs", {}))
    size = opts.get("size", IMAGE)
    if source == "seq":
        m = seq_model(name)
        return m, ("image", 3, 64, 64) if name == "unet" else ("tokens", SEQ_LEN)
    if source == "timm":
        import timm
        if "img_size" in opts:
            kwargs["img_size"] = opts["img_size"]
        try:  # stochastic depth exports as Bernoulli, which opset 13 training mode cannot express
            m = timm.create_model(name, pretrained=False, drop_path_rate=0.0, **kwargs)
        except TypeError:
            m = timm.create_model(name, pretrained=False, **kwargs)
        return m, ("image", 3, size, size)
    import torchvision
    if source == "tv":
        m = getattr(torchvision.models, name)(weights=None, **kwargs)
    elif source == "tvseg":
        m = getattr(torchvision.models.segmentation, name)(weights=None, **kwargs)
    elif source == "tvvideo":
        m = getattr(torchvision.models.video, name)(weights=None)
        t, s = opts["video"]
        return m, ("video", 3, t, s, s)
    else:
        raise ValueError(source)
    return m, ("image", 3, size, size)


def no_stochastic_depth(m):
    """Stochastic depth exports as Bernoulli, which opset 13 training mode cannot express: switch it off."""
    for mod in m.modules():
        kind = type(mod).__name__
        if kind == "StochasticDepth":
            mod.p = 0.0
        elif kind == "DropPath":
            mod.drop_prob = 0.0
    return m


def distinct_weights(m):
    """Random initialisation leaves many tensors equal (every LayerNorm weight is ones), and the exporter stores
    equal initializers once; a little noise keeps every parameter its own initializer, as trained weights are."""
    import torch
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in m.parameters():
            p.add_(torch.randn(p.shape, generator=g) * 1e-3)
    return m


def graph_params(path):
    """The parameters an exported file holds, by the onnx package: floating tensors of rank >= 1 that are
    initializers or (graph-only exports) graph inputs other than the data input, BatchNorm running statistics
    excluded."""
    import numpy as np
    import onnx
    g = onnx.load(path, load_external_data=False).graph
    bn_stats = {i for n in g.node if n.op_type == "BatchNormalization" for i in n.input[3:5]}
    floating = (1, 10, 11, 16)
    total = sum(int(np.prod(t.dims)) for t in g.initializer if t.data_type in floating and len(t.dims) > 0
                and t.name not in bn_stats)
    inits = {t.name for t in g.initializer}
    for i in g.input:
        tt = i.type.tensor_type
        if i.name in inits or i.name in bn_stats or i.name == "input" or tt.elem_type not in floating:
            continue
        dims = [d.dim_value for d in tt.shape.dim]
        if dims:
            total += int(np.prod(dims))
    return total


def example(spec, batch):
    import torch
    torch.manual_seed(0)
    if spec[0] == "tokens":
        return torch.randint(0, VOCAB, (batch, spec[1]))
    return torch.randn(batch, *spec[1:])


class Wrapped:
    """Segmentation models return a dict; export its 'out' tensor."""

    @staticmethod
    def of(m):
        import torch

        class Out(torch.nn.Module):
            def __init__(self, inner):
                super().__init__()
                self.inner = inner

            def forward(self, x):
                y = self.inner(x)
                return y["out"] if isinstance(y, dict) else y

        return Out(m)


def export(m, spec, path, style, variant):
    import torch
    x = example(spec, 2)
    axes = {0: "batch"}
    if variant == "seq":
        axes = {0: "batch", 1: "seq"}
    dyn = None if variant == "fixed" else {"input": axes, "output": {0: "batch"}}
    kw = dict(input_names=["input"], output_names=["output"], dynamic_axes=dyn)
    if style == "eval":
        m.eval()  # no torch.no_grad(): it would select fused attention kernels that do not export
        torch.onnx.export(m, (x,), path, export_params=True, do_constant_folding=True, opset_version=17, **kw)
    else:
        m.train()
        torch.onnx.export(m, (x,), path, export_params=False, do_constant_folding=False, opset_version=13,
                          training=torch.onnx.TrainingMode.TRAINING, **kw)


def reference(path, spec, batch, seq):
    """ONNX Runtime run with every node output exposed: shapes of all tensors and contraction FLOPs."""
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import helper
    model = onnx.load(path)
    g = model.graph
    declared = {o.name for o in g.output}
    for n in g.node:
        for o in n.output:
            if o and o not in declared:
                g.output.append(helper.make_empty_tensor_value_info(o))
                declared.add(o)
    so = ort.SessionOptions()
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    so.log_severity_level = 3
    sess = ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = {}
    for i in sess.get_inputs():
        shape = []
        for k, d in enumerate(i.shape):
            if isinstance(d, int):
                shape.append(d)
            elif d == "seq":
                shape.append(seq)
            else:
                shape.append(batch)
        if i.name == "input" and spec[0] == "tokens":
            feeds[i.name] = rng.integers(0, VOCAB, size=shape).astype(np.int64)
        elif "int64" in i.type:
            feeds[i.name] = np.zeros(shape, dtype=np.int64)
        elif "bool" in i.type:
            feeds[i.name] = np.zeros(shape, dtype=bool)
        else:
            feeds[i.name] = (rng.standard_normal(shape) * 0.05).astype(np.float32)
    names = [o.name for o in sess.get_outputs()]
    values = sess.run(names, feeds)
    shapes = {k: list(np.shape(v)) for k, v in zip(names, values)}
    for k, v in feeds.items():
        shapes[k] = list(v.shape)
    for t in g.initializer:
        shapes[t.name] = list(t.dims)
    flops = {"Conv": 0, "ConvTranspose": 0, "Gemm": 0, "MatMul": 0}
    for n in g.node:
        if n.op_type not in flops:
            continue
        out = shapes[n.output[0]]
        a = shapes[n.input[0]]
        w = shapes[n.input[1]]
        bias = len(n.input) > 2 and n.input[2] != ""
        if n.op_type == "Conv":
            f = 2 * int(np.prod(out)) * int(np.prod(w[1:]))
        elif n.op_type == "ConvTranspose":
            f = 2 * int(np.prod(a)) * int(np.prod(w[1:]))
        elif n.op_type == "Gemm":
            trans_a = any(at.name == "transA" and at.i for at in n.attribute)
            f = 2 * int(np.prod(out)) * (a[0] if trans_a else a[-1])
        else:
            f = 2 * int(np.prod(out)) * (a[-1] if len(a) > 1 else a[0])
        if bias and n.op_type != "MatMul":
            f += int(np.prod(out))  # the importer's bias convention: one FLOP per output element
        flops[n.op_type] += f
    first = {}
    for n in g.node:
        if n.output and n.output[0]:
            first[n.name] = shapes.get(n.output[0])
    return {"batch": batch, "seq": seq if spec[0] == "tokens" else None, "nodes": len(g.node), "flops": flops,

            "node_output_shapes": first, "op_types": sorted({n.op_type for n in g.node})}


def cmd_export(args):
    import torch
    os.makedirs(os.path.join(args.out, "graphs"), exist_ok=True)
    os.makedirs(os.path.join(args.out, "ref"), exist_ok=True)
    todo = [m for m in MODELS if not args.only or m[0] in args.only]
    for k, (mid, source, name, opts) in enumerate(todo):
        tokens = source == "seq" and name != "unet"
        jobs = [("train", "seq" if tokens else None), ("eval", "seq" if tokens else None)]
        jobs += [("eval", "fixed") for v in opts.get("variants", []) if v == "fixed"]
        for style, variant_eff in jobs:
            tag = style + ("-fixed" if variant_eff == "fixed" else "")
            ref_path = os.path.join(args.out, "ref", f"{mid}.{tag}.json")
            if os.path.exists(ref_path):
                continue
            graph = os.path.join(args.out, "graphs", f"{mid}.{tag}.onnx")
            rec = {"id": mid, "source": source, "name": name, "style": style, "variant": variant_eff,
                   "graph": os.path.relpath(graph, args.out)}
            t0 = time.time()
            try:
                torch.manual_seed(0)
                m, spec = build(source, name, opts)
                if source == "tvseg":
                    m = Wrapped.of(m)
                no_stochastic_depth(m)
                distinct_weights(m)
                rec["input"] = list(spec)
                rec["params_torch"] = int(sum(p.numel() for p in m.parameters() if p.requires_grad))
                export(m, spec, graph, style, variant_eff)
                rec["ref"] = reference(graph, spec, 2, SEQ_LEN)
            except Exception as e:  # record and go on: a model that does not export is a row of the table
                rec["error"] = f"{type(e).__name__}: {str(e)[:400]}"
                if args.verbose:
                    traceback.print_exc()
            rec["seconds"] = round(time.time() - t0, 1)
            with open(ref_path, "w") as f:
                json.dump(rec, f)
            print(f"[{k + 1}/{len(todo)}] {mid} {tag}: {rec.get('error', 'ok')} ({rec['seconds']} s)", flush=True)


def inspect(jar, path, dims):
    cmd = ["java", "-jar", jar, "inspect", path, "--batch", "2", "--json", "--allow-partial"]
    for d in dims:
        cmd += ["--dim", d]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["exit " + str(p.returncode)])[-1]
    return json.loads(p.stdout), None


def cmd_check(args):
    refs = sorted(f for f in os.listdir(os.path.join(args.out, "ref")) if f.endswith(".json"))
    rows = []
    for f in refs:
        rec = json.load(open(os.path.join(args.out, "ref", f)))
        row = {"id": rec["id"], "style": os.path.splitext(f)[0].split(".", 1)[1], "source": rec["source"]}
        if "error" in rec:
            row["status"] = "export failed: " + rec["error"][:120]
            rows.append(row)
            continue
        dims = [f"seq={rec['ref']['seq']}"] if rec.get("variant") == "seq" else []
        doc, err = inspect(args.jar, os.path.join(args.out, rec["graph"]), dims)
        if doc is None and rec.get("variant") == "fixed" and "dynamic_axes" in err:
            row["status"] = "refused as designed (a batch baked into the graph; the message says how to re-export)"
            rows.append(row)
            continue
        if doc is None:
            row["status"] = "import failed: " + err[:160]
            rows.append(row)
            continue
        ref = rec["ref"]
        layers = doc["layers"]
        unknown = sum(1 for l in layers if l["output_shape"] is None)
        mismatched = []
        for l in layers:
            want = ref["node_output_shapes"].get(l["name"])
            if want is not None and l["output_shape"] is not None and l["output_shape"] != want:
                mismatched.append(l["name"])
        got = {"Conv": 0, "ConvTranspose": 0, "Gemm": 0, "MatMul": 0}
        for l in layers:
            if l["op"] in got:
                got[l["op"]] += l["flops_fwd"]
        want_total = sum(ref["flops"].values())
        got_total = sum(got.values())
        row.update({
            "layers": len(layers), "unknown": unknown, "mismatched": len(mismatched),
            "params": doc["totals"]["params"], "params_torch": rec["params_torch"],
            "params_expected": rec["params_torch"] if rec["style"] == "train"
            else graph_params(os.path.join(args.out, rec["graph"])),
            "flops_ratio": got_total / want_total if want_total else 1.0,
            "coverage": doc.get("coverage", {}),
        })
        ok = (unknown == 0 and not mismatched and row["params"] == row["params_expected"]
              and abs(row["flops_ratio"] - 1) <= 0.02)
        row["status"] = "ok" if ok else "MISMATCH"
        if mismatched:
            row["first_mismatch"] = mismatched[0]
        rows.append(row)
        if args.verbose or not ok:
            print(json.dumps(row), flush=True)
    lines = ["| id | style | layers | unknown shapes | shape mismatches | params = reference | params / PyTorch's | "
             "contraction FLOPs / reference | status |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "layers" in r:
            same = r['params'] == r['params_expected']
            lines.append(f"| {r['id']} | {r['style']} | {r['layers']} | {r['unknown']} | {r['mismatched']} | "
                         f"{'yes' if same else str(r['params']) + ' vs ' + str(r['params_expected'])}"
                         f" | {r['params'] / r['params_torch']:.4f} | {r['flops_ratio']:.4f} | {r['status']} |")
        else:
            lines.append(f"| {r['id']} | {r['style']} | | | | | | | {r['status']} |")
    archs = {r["id"] for r in rows}
    sources = {r["source"] for r in rows}
    ok = [r for r in rows if r["status"] == "ok" or r["status"].startswith("refused as designed")]
    summary = (f"{len(archs)} architectures from {len(sources)} sources, {len(rows)} files: {len(ok)} ok, "
               f"{sum(1 for r in rows if r['status'] == 'MISMATCH')} mismatched, "
               f"{sum(1 for r in rows if r['status'].startswith('import failed'))} import failures, "
               f"{sum(1 for r in rows if r['status'].startswith('export failed'))} export failures")
    text = "\n".join(lines + ["", summary])
    if args.md:
        with open(args.md, "w") as f:
            f.write(text + "\n")
    print(text)
    return 0 if len(ok) == len([r for r in rows if not r["status"].startswith("export failed")]) else 1


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("export", help="export the zoo and record the ONNX Runtime reference")
    e.add_argument("out")
    e.add_argument("--only", nargs="*", help="architecture ids")
    e.add_argument("--list", action="store_true", help="print the ids and exit")
    e.add_argument("--verbose", action="store_true")
    c = sub.add_parser("check", help="run scaledl inspect on every exported file and compare")
    c.add_argument("out")
    c.add_argument("--jar", required=True, help="scaledl-examples/target/scaledl.jar")
    c.add_argument("--md", help="also write the table to this Markdown file")
    c.add_argument("--verbose", action="store_true")
    args = p.parse_args()
    if args.cmd == "export":
        if args.list:
            for m in MODELS:
                print(m[0], m[1], m[2])
            return 0
        return cmd_export(args) or 0
    return cmd_check(args)


if __name__ == "__main__":
    sys.exit(main())
