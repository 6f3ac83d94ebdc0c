#include "src/export/pytorch.h"

#include <fmt/core.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <set>
#include <stdexcept>

#include "src/io/files.h"
#include "src/io/safetensors.h"
#include "src/text/catalogue.h"
#include "src/train/checkpoint.h"
#include "src/train/loss.h"
#include "src/train/run.h"
#include "src/train/run_files.h"
#include "src/train/trainer.h"

namespace seqgrad::pytorch {

namespace fs = std::filesystem;

namespace {

constexpr const char* kFormat = "seqgrad pytorch export 1";
constexpr const char* kWeights = "weights.safetensors";
constexpr const char* kBatch = "batch.safetensors";
// While an export moves its files into place, this marker is there: an export killed then leaves it, and check.py,
// import and the next export see that the folder may hold old and new files. Its files are first written whole
// into a staging folder (kStaging + six letters) beside them, which the next export clears.
constexpr const char* kIncomplete = ".seqgrad-export-incomplete";
constexpr std::string_view kStaging = ".seqgrad-staging-";
// What a killed export leaves beside the marker, which the next export clears: a staging folder, the marker's
// temporary.
bool export_leftover(const std::string& name) {
  return name.starts_with(kStaging) || io::is_temporary_of(name, kIncomplete);
}

// One seqgrad parameter and where it lands in the PyTorch module's state_dict.
struct Mapped {
  std::string ours, theirs;
  bool transpose = false;  // seqgrad keeps x W, (in, out); nn.Linear keeps W as (out, in)
  std::string how;         // for the README's table
};

// The state_dict name of every parameter of `model`, with its layout, in the
// model's own order. Linear weights turn over; LayerNorm's gamma and beta are
// PyTorch's weight and bias; a recurrent layer's W_x, W_h and biases are the
// nn.RNN/LSTM/GRU's weight_ih_l<l>, weight_hh_l<l>, bias_ih_l<l>, bias_hh_l<l>
// (the gates in the same order: PyTorch's i, f, g, o and r, z, n are seqgrad's).
std::vector<Mapped> mapping(const nn::SequenceModel& model) {
  std::vector<Mapped> out;
  for (const auto& [name, p] : model.named_parameters()) {
    const bool matrix = p.shape().size() == 2;
    // A recurrent layer's "layers.<l>.<W_x|W_h|b|b_x|b_h>".
    const std::size_t dot = name.find('.', 7);
    if (name.rfind("layers.", 0) == 0 && dot != std::string::npos) {
      const std::string l = name.substr(7, dot - 7), w = name.substr(dot + 1);
      if (w == "W_x") out.push_back({name, "rnn.weight_ih_l" + l, true, "transposed"});
      if (w == "W_h") out.push_back({name, "rnn.weight_hh_l" + l, true, "transposed"});
      if (w == "b") out.push_back({name, "rnn.bias_ih_l" + l, false, "as is (rnn.bias_hh_l" + l + " is 0)"});
      if (w == "b_x") out.push_back({name, "rnn.bias_ih_l" + l, false, "as is"});
      if (w == "b_h") out.push_back({name, "rnn.bias_hh_l" + l, false, "as is"});
    } else if (name == "input.embed.weight" || name == "pos_embedding") {  // (vocab or position, d_model) both
      out.push_back({name, name == "pos_embedding" ? name : "embed.weight", false, "as is"});
    } else if (name.rfind("input.project.", 0) == 0) {
      out.push_back({name, name.substr(6), matrix, matrix ? "transposed" : "as is"});
    } else if (name.size() > 6 && name.compare(name.size() - 6, 6, ".gamma") == 0) {
      out.push_back({name, name.substr(0, name.size() - 6) + ".weight", false, "as is"});
    } else if (name.size() > 5 && name.compare(name.size() - 5, 5, ".beta") == 0) {
      out.push_back({name, name.substr(0, name.size() - 5) + ".bias", false, "as is"});
    } else {
      out.push_back({name, name, matrix, matrix ? "transposed" : "as is"});
    }
  }
  return out;
}

// Whether the model keeps one bias per recurrent layer, which PyTorch splits in two.
bool one_bias(const nn::ModelConfig& c) { return c.kind == "rnn" || c.kind == "lstm"; }

std::vector<float> transposed(const std::vector<float>& v, std::int64_t rows, std::int64_t cols) {
  std::vector<float> t(v.size());
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t c = 0; c < cols; ++c)
      t[static_cast<std::size_t>(c * rows + r)] = v[static_cast<std::size_t>(r * cols + c)];
  return t;
}

// "transformer, d_model 64, 2 layers, ...": in English for model.py and README.md, in the process's language for
// what the commands print.
std::string describe(const nn::ModelConfig& c, text::Lang lang) {
  const std::string layers =
      c.layers == 1 ? text::trf("tools.model.one_layer", lang) : text::trf("tools.model.layers", lang, c.layers);
  if (c.recurrent()) return text::trf("tools.model.recurrent", lang, c.kind, c.d_model, layers);
  std::string s = text::trf("tools.model.transformer", lang, c.d_model, layers, c.heads);
  s += c.ffn ? text::trf("tools.model.ffn", lang, c.ffn_mult * c.d_model, nn::choices::to_string(c.activation))
             : text::trf("tools.model.no_ffn", lang);
  const std::string pos = nn::choices::to_string(c.pos);
  s += pos == "none" ? text::trf("tools.model.no_positions", lang) : text::trf("tools.model.positions", lang, pos);
  s += c.pre_ln ? ", pre-LN" : ", post-LN";
  s += c.causal ? text::trf("tools.model.causal", lang) : text::trf("tools.model.not_causal", lang);
  if (c.attention == nn::choices::Attention::linear) s += text::trf("tools.model.linear", lang);
  if (!c.scale_attention) s += text::trf("tools.model.not_scaled", lang);
  if (c.tie_qk) s += ", W_Q = W_K";
  if (!c.value_proj) s += c.tie_kv ? ", V = K" : ", V = X";
  return s;
}

// The same, for the Korean README.
std::string describe_ko(const nn::ModelConfig& c) {
  const std::string layers = fmt::format("층 {}개", c.layers);
  if (c.recurrent())
    return fmt::format("{}, 은닉 크기 {}, {}",
                       c.kind == "rnn"    ? "기본 RNN"
                       : c.kind == "lstm" ? "LSTM"
                                          : "GRU",
                       c.d_model, layers);
  std::string s = fmt::format("트랜스포머, d_model {}, {}, 헤드 {}개", c.d_model, layers, c.heads);
  s += c.ffn ? fmt::format(", FFN {}({})", c.ffn_mult * c.d_model, nn::choices::to_string(c.activation)) : ", FFN 없음";
  const std::string pos = nn::choices::to_string(c.pos);
  s += pos == "none"         ? ", 위치 정보 없음"
       : pos == "sinusoidal" ? ", 사인파 위치 인코딩"
       : pos == "learned"    ? ", 학습된 위치 임베딩"
                             : ", 회전 위치 인코딩(RoPE)";
  s += c.pre_ln ? ", pre-LN" : ", post-LN";
  s += c.causal ? ", 인과 마스크" : ", 마스크 없음";
  if (c.attention == nn::choices::Attention::linear) s += text::tr("tools.model.linear", text::Lang::ko);
  if (!c.scale_attention) s += ", 점수를 sqrt(d_k)로 나누지 않음";
  if (c.tie_qk) s += ", W_Q = W_K";
  if (!c.value_proj) s += c.tie_kv ? ", V = K" : ", V = X";
  return s;
}

// ---------------------------------------------------------------- model.py

constexpr const char* kSafetensorsPy = R"PY(
# ---- weights: the safetensors format with the standard library and torch alone
# (8 bytes of little-endian header length, a JSON header, then the raw data;
# Debian 12 has no package of the safetensors library).
DTYPES = {"F32": torch.float32, "F64": torch.float64, "I32": torch.int32, "I64": torch.int64}


def read_safetensors(path):
    """({name: tensor}, metadata) of a safetensors file."""
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    metadata = header.pop("__metadata__", {})
    body = data[8 + length:]
    tensors = {}
    for name, t in header.items():
        begin, end = t["data_offsets"]
        tensors[name] = torch.frombuffer(bytearray(body[begin:end]), dtype=DTYPES[t["dtype"]]).reshape(t["shape"])
    return tensors, metadata


def write_safetensors(path, tensors, metadata):
    """Writes {name: tensor} (float32 or float64) and metadata {str: str} as safetensors."""
    # seqgrad's checksum covers the file as seqgrad wrote it: a file written here carries none.
    metadata = {k: v for k, v in metadata.items() if k != "checksum"}
    header, blobs, at = {"__metadata__": metadata}, [], 0
    names = {torch.float32: "F32", torch.float64: "F64", torch.int32: "I32", torch.int64: "I64"}
    for name, t in tensors.items():
        raw = t.detach().cpu().contiguous().numpy().tobytes()
        header[name] = {"dtype": names[t.dtype], "shape": list(t.shape), "data_offsets": [at, at + len(raw)]}
        blobs.append(raw)
        at += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def load_weights(model, path):
    """Loads a weights file of this module's layout into `model` (every tensor, nothing else); returns it."""
    tensors, _ = read_safetensors(path)
    model.load_state_dict(tensors)
    return model


def save_weights(model, path):
    """Saves `model`'s weights in the layout load_weights and `seqgrad import` read."""
    metadata = {"format": "seqgrad pytorch export 1", "config": json.dumps(SEQGRAD_CONFIG), "step": str(SEQGRAD_STEP)}
    write_safetensors(path, model.state_dict(), metadata)
)PY";

std::string model_py(const train::TrainConfig& config, long step, const std::string& run_dir) {
  const nn::ModelConfig& c = config.model;
  const bool tokens = c.vocab > 0;
  const bool drop = c.dropout > 0;
  std::string py;
  auto add = [&py](const std::string& line = "") { py += line + "\n"; };
  // The run's name in a docstring: without the characters that could end it.
  std::string name = run_dir;
  name.erase(std::remove_if(name.begin(), name.end(), [](char ch) { return ch == '"' || ch == '\\' || ch == '\n'; }),
             name.end());
  add(R"(""")" + fmt::format("The seqgrad run {} as a PyTorch module: {}.", name, describe(c, text::Lang::en)));
  add();
  add("Written by `seqgrad export`. Each class names the seqgrad file it mirrors; the weights");
  add("are the run's own (weights.safetensors), so this module gives seqgrad's logits:");
  add();
  add("    from model import Model, load_weights");
  add("    model = load_weights(Model(), \"weights.safetensors\").eval()  # eval(): no dropout, as seqgrad evaluates");
  add(R"(""")");
  add("import json");
  add("import math");
  add("import struct");
  add();
  add("import torch");
  add("import torch.nn as nn");
  add("import torch.nn.functional as F");
  add();
  add("# The run's configuration as seqgrad saved it (src/train/config.cpp), and its step.");
  add("SEQGRAD_CONFIG = json.loads(" + nlohmann::json(nlohmann::json(config).dump()).dump() + ")");
  add(fmt::format("SEQGRAD_STEP = {}", step));
  add();
  if (tokens)
    add(fmt::format("VOCAB = {}  # input token ids in [0, VOCAB)", c.vocab));
  else
    add(fmt::format("FEATURES = {}  # real values per input position", c.features));
  add(fmt::format("OUT_DIM = {}  # {}", c.out_dim,
                  c.out_dim == 1 ? "one value per position (a regression)" : "logits per position"));
  add(fmt::format("D_MODEL = {}", c.d_model));
  add(fmt::format("LAYERS = {}", c.layers));
  if (!c.recurrent()) {
    add(fmt::format("HEADS = {}", c.heads));
    add("HEAD_DIM = D_MODEL // HEADS");
    if (c.ffn) add(fmt::format("FFN_WIDTH = {}", c.ffn_mult * c.d_model));
    if (c.pos == nn::choices::PositionalEncoding::learned)
      add(fmt::format("MAX_LEN = {}  # positions of the learned table", c.max_len));
  }
  if (drop) add(fmt::format("DROPOUT = {}  # in training only (model.train())", c.dropout));
  add();
  const std::string input_doc = tokens ? "x: (B, T) token ids" : "x: (B, T, FEATURES) real values";
  const std::string input_layer =
      tokens ? "        self.embed = nn.Embedding(VOCAB, D_MODEL)  # seqgrad: input.embed (src/nn/layers.cpp)"
             : "        self.project = nn.Linear(FEATURES, D_MODEL)  # seqgrad: input.project";
  if (c.recurrent()) {
    const std::string torch_class = c.kind == "rnn" ? "RNN" : c.kind == "lstm" ? "LSTM" : "GRU";
    add();
    add("class Model(nn.Module):");
    add(fmt::format(
        R"(    """The run's {} (src/nn/recurrent.cpp: RecurrentModel): the input, {} {} layer{}, a linear head.)",
        c.kind == "rnn" ? "vanilla RNN" : torch_class, c.layers, torch_class, c.layers == 1 ? "" : "s"));
    add();
    if (c.kind == "gru")
      add("    The gates in PyTorch's order and convention, as seqgrad's GRUCell: [r | z | n],");
    else if (c.kind == "lstm")
      add("    The gates in PyTorch's order, as seqgrad's LSTMCell: [i | f | g | o], c_t = f c + i g, h_t = o "
          "tanh(c_t).");
    else
      add("    h_t = tanh(x_t W_x + h_{t-1} W_h + b) (autograd/ops_nn.cpp: rnn_tanh).");
    if (c.kind == "gru") add("    n = tanh(x W_in + b_in + r (h W_hn + b_hn)), h_t = (1 - z) n + z h_{t-1}.");
    add(R"(    """)");
    add();
    add("    def __init__(self):");
    add("        super().__init__()");
    add(input_layer);
    if (one_bias(c)) {
      add("        # seqgrad: layers.<l>.W_x, W_h (transposed here) and b; PyTorch keeps two biases that add,");
      add("        # bias_ih (seqgrad's b) and bias_hh (0 in the export).");
    } else {
      add("        # seqgrad: layers.<l>.W_x, W_h (transposed here), b_x and b_h (PyTorch's bias_ih and bias_hh).");
    }
    std::string args = "D_MODEL, D_MODEL, num_layers=LAYERS, batch_first=True";
    if (drop && c.layers > 1) args += ", dropout=DROPOUT";
    add(fmt::format("        self.rnn = nn.{}({})", torch_class, args));
    add("        self.head = nn.Linear(D_MODEL, OUT_DIM)  # seqgrad: head");
    add();
    add("    def forward(self, x):");
    add(fmt::format(R"~(        """{} -> (B, T, OUT_DIM)""")~", input_doc));
    add(fmt::format("        h, _ = self.rnn(self.{}(x))  # (B, T, D_MODEL): the top layer's h_t at every t; h_0 = 0",
                    tokens ? "embed" : "project"));
    add("        return self.head(h)");
  } else {
    const bool rope = c.pos == nn::choices::PositionalEncoding::rope;
    if (c.pos == nn::choices::PositionalEncoding::sinusoidal) {
      add();
      add("def sinusoidal_encoding(T, C):");
      add(R"(    """The paper's table (T, C): sin at channels 2i, cos at 2i + 1 (src/nn/transformer.cpp).""")");
      add("    position = torch.arange(T, dtype=torch.float64)[:, None]");
      add("    wavelength = 10000.0 ** (torch.arange(0, C, 2, dtype=torch.float64) / C)");
      add("    pe = torch.zeros(T, C, dtype=torch.float64)");
      add("    pe[:, 0::2] = torch.sin(position / wavelength)");
      add("    pe[:, 1::2] = torch.cos(position / wavelength)");
      add("    return pe.float()");
      add();
    }
    if (rope) {
      add();
      add("def rotary(x):");
      add(R"(    """Each pair of channels (2i, 2i + 1) at position t turned by t * 10000^(-2i/D), D the head's width,)");
      add("    so that a query's dot product with a key depends on their distance alone (autograd/ops_nn.cpp: "
          "rotary).");
      add(R"(    x: (B, heads, T, D) -> the same shape.""")");
      add("    T, D = x.shape[-2], x.shape[-1]");
      add("    angle = torch.arange(T, dtype=torch.float64)[:, None] * 10000.0 ** (");
      add("        -torch.arange(0, D, 2, dtype=torch.float64) / D)");
      add("    cos, sin = torch.cos(angle).to(x.device, x.dtype), torch.sin(angle).to(x.device, x.dtype)");
      add("    a, b = x[..., 0::2], x[..., 1::2]");
      add("    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)");
      add();
    }
    add();
    add("class Attention(nn.Module):");
    add(R"(    """Multi-head self-attention (src/nn/transformer.cpp: MultiHeadAttention; autograd/ops_attention.cpp).""")");
    add();
    add("    def __init__(self):");
    add("        super().__init__()");
    add("        self.w_q = nn.Linear(D_MODEL, D_MODEL)");
    if (!c.tie_qk) add("        self.w_k = nn.Linear(D_MODEL, D_MODEL)");
    if (c.value_proj) add("        self.w_v = nn.Linear(D_MODEL, D_MODEL)");
    add("        self.w_o = nn.Linear(D_MODEL, D_MODEL)");
    add();
    add("    def forward(self, x):");
    add("        B, T, C = x.shape");
    add("        q = self.w_q(x)");
    add(c.tie_qk ? "        k = q  # --tie-qk: one matrix for W_Q and W_K, so q . k is symmetric"
                 : "        k = self.w_k(x)");
    add(c.value_proj ? "        v = self.w_v(x)"
        : c.tie_kv   ? "        v = k  # --tie-kv: no W_V, the values are the keys (taken before any rotation)"
                     : "        v = x  # --no-value: no W_V, the values are the block's input itself");
    add("        # (B, T, C) -> (B, HEADS, T, HEAD_DIM): head h takes channels [h HEAD_DIM, (h + 1) HEAD_DIM)");
    add("        q, k, v = (t.view(B, T, HEADS, HEAD_DIM).transpose(1, 2) for t in (q, k, v))");
    if (rope) add("        q, k = rotary(q), rotary(k)  # --pos rope: the positions enter here, in q and k alone");
    if (c.attention == nn::choices::Attention::linear) {
      add("        # --attention linear: phi(x) = elu(x) + 1 > 0 in place of the softmax; each row divided by its "
          "total");
      add("        scores = (F.elu(q) + 1) @ (F.elu(k) + 1).transpose(-2, -1)  # (B, HEADS, T, T), all > 0");
      if (c.causal) {
        add("        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)");
        add("        scores = scores.masked_fill(future, 0.0)  # causal: position t sees 0..t");
      }
      add("        weights = scores / (scores.sum(dim=-1, keepdim=True) + 1e-6)");
    } else {
      add(c.scale_attention ? "        scores = q @ k.transpose(-2, -1) / math.sqrt(HEAD_DIM)  # (B, HEADS, T, T)"
                            : "        scores = q @ k.transpose(-2, -1)  # --no-scale: not divided by sqrt(d_k)");
      if (c.causal) {
        add("        future = torch.ones(T, T, dtype=torch.bool, device=x.device).triu(1)");
        add("        scores = scores.masked_fill(future, float(\"-inf\"))  # causal: position t sees 0..t");
      }
      add("        weights = scores.softmax(dim=-1)");
    }
    add("        out = (weights @ v).transpose(1, 2).reshape(B, T, C)  # the heads side by side again");
    add("        return self.w_o(out)");
    add();
    if (c.ffn) {
      add();
      add("class FeedForward(nn.Module):");
      add(R"(    """The position-wise FFN (src/nn/transformer.cpp: FeedForward): the same two layers at every position.""")");
      add();
      add("    def __init__(self):");
      add("        super().__init__()");
      add("        self.up = nn.Linear(D_MODEL, FFN_WIDTH)");
      add("        self.down = nn.Linear(FFN_WIDTH, D_MODEL)");
      add();
      add("    def forward(self, x):");
      add(c.activation == nn::choices::Activation::gelu
              ? "        return self.down(F.gelu(self.up(x)))  # the exact GELU, x Phi(x)"
              : "        return self.down(F.relu(self.up(x)))");
      add();
    }
    add();
    add("class Block(nn.Module):");
    add(fmt::format(R"(    """One block (src/nn/transformer.cpp: TransformerBlock), {}.""")",
                    c.pre_ln ? "pre-LN: LayerNorm before each sublayer, the residual path left clean"
                             : "post-LN as in the paper: LayerNorm after each residual sum"));
    add();
    add("    def __init__(self):");
    add("        super().__init__()");
    add("        self.attn = Attention()");
    add("        self.ln1 = nn.LayerNorm(D_MODEL)  # seqgrad: gamma, beta = PyTorch's weight, bias; eps 1e-5");
    if (c.ffn) {
      add("        self.ffn = FeedForward()");
      add("        self.ln2 = nn.LayerNorm(D_MODEL)");
    }
    if (drop) add("        self.drop = nn.Dropout(DROPOUT)  # on each sublayer's output");
    add();
    add("    def forward(self, x):");
    const std::string attn = drop ? "self.drop(self.attn(" : "self.attn(";
    const std::string ffn = drop ? "self.drop(self.ffn(" : "self.ffn(";
    const std::string close = drop ? "))" : ")";
    if (c.pre_ln) {
      add("        x = x + " + attn + "self.ln1(x)" + close);
      if (c.ffn) add("        x = x + " + ffn + "self.ln2(x)" + close);
    } else {
      add("        x = self.ln1(x + " + attn + "x" + close + ")");
      if (c.ffn) add("        x = self.ln2(x + " + ffn + "x" + close + ")");
    }
    add("        return x");
    add();
    add();
    add("class Model(nn.Module):");
    add(R"(    """The run's Transformer (src/nn/transformer.cpp: Transformer): the input, the positions,)");
    add(R"(    LAYERS blocks, a linear head.""")");
    add();
    add("    def __init__(self):");
    add("        super().__init__()");
    add(input_layer);
    if (c.pos == nn::choices::PositionalEncoding::learned)
      add("        self.pos_embedding = nn.Parameter(torch.zeros(MAX_LEN, D_MODEL))  # --pos learned");
    if (drop) add("        self.drop = nn.Dropout(DROPOUT)");
    add("        self.blocks = nn.ModuleList(Block() for _ in range(LAYERS))");
    if (c.pre_ln) add("        self.final_ln = nn.LayerNorm(D_MODEL)  # pre-LN ends with one more LayerNorm");
    add("        self.head = nn.Linear(D_MODEL, OUT_DIM)");
    add();
    add("    def forward(self, x):");
    add(fmt::format(R"~(        """{} -> (B, T, OUT_DIM)""")~", input_doc));
    add("        T = x.shape[1]");
    if (tokens)
      add("        x = self.embed(x) * math.sqrt(D_MODEL)  # scaled, as in the paper, not to drown in the positions");
    else
      add("        x = self.project(x)");
    if (c.pos == nn::choices::PositionalEncoding::sinusoidal)
      add("        x = x + sinusoidal_encoding(T, D_MODEL).to(x.device)");
    if (c.pos == nn::choices::PositionalEncoding::learned) add("        x = x + self.pos_embedding[:T]");
    if (c.pos == nn::choices::PositionalEncoding::none)
      add("        # --pos none: no positions at all; only the causal mask (if any) tells the order");
    if (drop) add("        x = self.drop(x)");
    add("        for block in self.blocks:");
    add("            x = block(x)");
    if (c.pre_ln) add("        x = self.final_ln(x)");
    add("        return self.head(x)");
  }
  add();
  add();
  add("def model_input(batch):");
  add(R"(    """The model's input from a batch file's tensors (batch.safetensors).""")");
  add(tokens ? "    return batch[\"tokens\"].long()" : "    return batch[\"features\"]");
  add();
  add();
  add("def loss_of(logits, batch):");
  if (c.out_dim == 1 && !tokens) {
    add(R"(    """seqgrad's loss for this task (src/train/loss.cpp): the mean squared error of the value read)");
    add(R"(    at the last position.""")");
    add("    return F.mse_loss(logits[:, -1, 0], batch[\"values\"])");
  } else {
    add(R"(    """seqgrad's loss for this task (src/train/loss.cpp): the cross-entropy over the scored positions)");
    add(R"(    (a target of -100 is not scored).""")");
    add("    return F.cross_entropy(logits.reshape(-1, OUT_DIM), batch[\"targets\"].reshape(-1).long(), "
        "ignore_index=-100)");
  }
  add();
  py += kSafetensorsPy;
  return py;
}

constexpr const char* kCheckPy = R"PY(#!/usr/bin/env python3
"""Checks this export: PyTorch's logits and loss on the run's held-out batch against seqgrad's,
then one training step in PyTorch from the exported weights, which must lower the loss.

usage: python3 check.py   (exit 0 when all three hold)
"""
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent
if (HERE / ".seqgrad-export-incomplete").exists():
    sys.exit("this export stopped while its files were moved into place (old and new may be mixed): "
             "run seqgrad export again")
try:
    import torch
except ModuleNotFoundError:
    sys.exit(f"PyTorch is not installed for {sys.executable}: on Debian, sudo apt-get install python3-torch")
sys.path.insert(0, str(HERE))
from model import Model, load_weights, loss_of, model_input, read_safetensors  # noqa: E402

torch.manual_seed(0)
model = load_weights(Model(), HERE / "weights.safetensors").eval()  # eval(): no dropout, as seqgrad evaluates
batch, meta = read_safetensors(HERE / "batch.safetensors")
x = model_input(batch)
with torch.no_grad():
    logits = model(x)
expected = batch["logits"]
largest = (logits - expected).abs().max().item()
relative = largest / max(expected.abs().max().item(), 1e-30)
loss = loss_of(logits, batch).item()
ours = float(meta["loss"])
print(f"held-out batch: {x.shape[0]} sequences of {x.shape[1]} positions ({meta['task']})")
print(f"logits: largest difference {largest:.2e}, {relative:.2e} of the largest logit (pass: at most 1e-4)")
print(f"loss:   PyTorch {loss:.8g}, seqgrad {ours:.8g}, difference {abs(loss - ours):.2e} (pass: at most 1e-5)")

# One step of plain gradient descent from these weights, the gradient clipped to norm 1 as `seqgrad train`
# clips it by default; in float64, so that the change shows even on a loss float32 cannot resolve further.
model = model.double()
batch = {name: t.double() if t.is_floating_point() else t for name, t in batch.items()}
x = model_input(batch)
optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
before = loss_of(model(x), batch)
before.backward()
torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
optimizer.step()
with torch.no_grad():
    after = loss_of(model(x), batch).item()
print(f"one SGD step in PyTorch (float64, lr 0.01, clipped to norm 1): loss {before.item():.10g} -> {after:.10g}")

failed = [what for what, ok in (("logits", relative <= 1e-4), ("loss", abs(loss - ours) <= 1e-5),
                                ("the step", after < before.item())) if not ok]
print("check: pass" if not failed else "check: FAIL (" + ", ".join(failed) + ")")
sys.exit(1 if failed else 0)
)PY";

std::string names_table(const std::vector<Mapped>& map, const nn::SequenceModel& model, bool korean) {
  std::string t = korean ? "| seqgrad 이름 | 모양 | PyTorch 이름 | 옮긴 방법 |\n|---|---|---|---|\n"
                         : "| seqgrad name | shape | PyTorch name | layout |\n|---|---|---|---|\n";
  const auto params = model.named_parameters();
  for (std::size_t i = 0; i < map.size(); ++i) {
    std::string how = map[i].how;
    if (korean) {
      if (how == "transposed")
        how = "전치";
      else if (how == "as is")
        how = "그대로";
      else
        how = "그대로 (`" + how.substr(how.find('(') + 1, how.find(" is 0") - how.find('(') - 1) + "`은 0으로 채움)";
    }
    t += fmt::format("| `{}` | {} | `{}` | {} |\n", map[i].ours, ag::to_string(params[i].second.shape()), map[i].theirs,
                     how);
  }
  return t;
}

// The run's name as a Markdown code span on one line: nothing in it (a newline, a '#', a link, HTML) is read as
// Markdown. The fence is one backtick longer than the longest run of them in the name.
std::string markdown_code(std::string_view name) {
  const std::string text = text::one_line(name);
  std::size_t longest = 0;
  for (std::size_t i = 0, run = 0; i < text.size(); ++i)
    longest = std::max(longest, run = text[i] == '`' ? run + 1 : 0);
  const std::string fence(longest + 1, '`');
  const bool pad = !text.empty() && (text.front() == '`' || text.back() == '`');
  return fence + (pad ? " " : "") + text + (pad ? " " : "") + fence;
}

std::string readme(const std::string& run_dir_name, const std::string& model, const std::string& table, bool korean) {
  const std::string run_dir = markdown_code(run_dir_name);
  if (korean) {
    return fmt::format(R"(# PyTorch로 옮긴 seqgrad 학습 결과: {}

모델: {}.

- `model.py`: 이 학습과 같은 설정으로 작성한 PyTorch 모듈입니다. 클래스마다 어느 seqgrad 파일을 옮긴 것인지
  적혀 있습니다.
- `weights.safetensors`: 이 학습의 가중치를 모듈의 매개변수 이름과 모양에 맞춰 옮긴 파일입니다.
- `batch.safetensors`: 이 학습의 첫 평가 배치, 그리고 그 배치에 대해 seqgrad가 계산한 로짓과 손실입니다.
- `check.py`: PyTorch의 로짓과 손실을 seqgrad의 것과 비교하고, PyTorch에서 한 스텝 학습해 손실이 줄어드는지
  확인합니다.

## 불러오기

```python
from model import Model, load_weights
model = load_weights(Model(), "weights.safetensors").eval()
```

`python3 check.py`를 실행해 확인할 수 있습니다. 모든 검사를 통과하면 종료 코드 0으로 끝납니다.

## PyTorch에서 이어서 학습하기

일반 PyTorch 모듈이므로 `torch.optim`의 옵티마이저로 그대로 학습하면 됩니다. 학습한 가중치를
`save_weights(model, "weights.safetensors")`로 저장한 뒤 `seqgrad import 이_폴더 --out 새_학습_폴더`를 실행하면,
그 가중치로 seqgrad 학습 폴더를 다시 만듭니다. 그 폴더를 `seqgrad eval`, `seqgrad grads`, `seqgrad attention`
같은 명령으로 살펴볼 수 있습니다.

## 이름 대응

seqgrad는 `x W` 꼴로 곱하므로 행렬이 (입력, 출력) 모양이고, `nn.Linear`는 (출력, 입력) 모양으로 저장합니다.
그래서 행렬은 전치해서 옮깁니다. 순환 층의 게이트 순서는 PyTorch와 같습니다(LSTM: i, f, g, o / GRU: r, z, n).
기본 RNN과 LSTM은 seqgrad에서는 편향이 하나, PyTorch에서는 더해지는 편향이 둘입니다. 내보낼 때는 seqgrad의 편향을
`bias_ih`에, 0을 `bias_hh`에 넣고, `seqgrad import`는 둘을 더해 하나로 되돌립니다.

{})",
                       run_dir, model, table);
  }
  return fmt::format(R"(# The seqgrad run {} in PyTorch

The model: {}.

- `model.py`: one PyTorch module for this run's configuration; each class names the seqgrad file it mirrors.
- `weights.safetensors`: the run's weights under the module's state_dict names and layouts.
- `batch.safetensors`: the run's first held-out batch, with the logits and the loss seqgrad computed on it.
- `check.py`: compares PyTorch's logits and loss with seqgrad's, then takes one training step in PyTorch
  and checks that the loss goes down.

## Loading it

```python
from model import Model, load_weights
model = load_weights(Model(), "weights.safetensors").eval()
```

`python3 check.py` checks it (exit 0 when it passes).

## Training it further in PyTorch

It is a plain PyTorch module: train it with any `torch.optim` optimiser. Save what you trained with
`save_weights(model, "weights.safetensors")`, and `seqgrad import THIS_DIR --out RUN_DIR` turns it back
into a seqgrad run directory, for `seqgrad eval`, `grads`, `attention` and the other tools.

## Names

seqgrad multiplies `x W`, so its matrices are (in, out); `nn.Linear` keeps (out, in): the matrices are
transposed on the way. The recurrent gates are in PyTorch's order (LSTM: i, f, g, o; GRU: r, z, n).
A vanilla RNN or an LSTM has one bias in seqgrad and two in PyTorch, which add: the export writes
seqgrad's as `bias_ih` and zeros as `bias_hh`, and `seqgrad import` adds the two back into one.

{})",
                     run_dir, model, table);
}

// `out_dir` may receive the export: not a run's directory; empty, new, or (with overwrite) any other folder.
void check_destination(const std::string& out_dir, bool overwrite) {
  if (out_dir.empty()) throw std::invalid_argument(text::msg("tools.export.out_empty"));
  train::check_output_dir("--out", out_dir);
  std::error_code ec;
  if (fs::is_symlink(out_dir, ec) && !fs::exists(out_dir, ec))
    throw std::invalid_argument(text::msg("tools.export.out_dangling", out_dir));
  if (!fs::exists(out_dir, ec)) return;
  for (const std::string& own : train::run_file_names())
    if (fs::exists(fs::path(out_dir) / own, ec))
      throw std::invalid_argument(text::msg("tools.export.out_is_run", out_dir, own));
  std::string joined;
  for (const std::string& f : export_files()) joined += (joined.empty() ? "" : ", ") + f;
  for (const std::string& f : export_files())
    if (fs::is_directory(fs::path(out_dir) / f, ec))
      throw std::invalid_argument(text::msg("tools.export.out_holds_folder", out_dir, f));
  // What a killed export left is the export's to replace, not the user's: its staging folder, its marker (or the
  // marker's temporary), and with the marker there the export's own files, half moved.
  const bool marked = fs::exists(fs::path(out_dir) / kIncomplete, ec);
  bool empty = true;
  for (const fs::directory_entry& e : fs::directory_iterator(out_dir, ec)) {
    const std::string name = e.path().filename().string();
    const bool own = std::find(export_files().begin(), export_files().end(), name) != export_files().end();
    empty = empty && (name == kIncomplete || export_leftover(name) || (marked && own));
  }
  if (!overwrite && !empty) throw std::invalid_argument(text::msg("tools.export.out_not_empty", out_dir, joined));
}

}  // namespace

const std::vector<std::string>& export_files() {
  static const std::vector<std::string> files = {"weights.safetensors", "batch.safetensors", "model.py", "check.py",
                                                 "README.md",           "README.ko.md"};
  return files;
}

ExportResult export_run(const std::string& run_dir, const std::string& out_dir, bool overwrite, const std::string& text,
                        const std::function<void(const std::string&)>& note) {
  check_destination(out_dir, overwrite);
  train::Checkpoint ck = train::load_checkpoint(run_dir, text, note);
  const nn::SequenceModel& model = *ck.model;
  const nn::ModelConfig& c = model.config();
  const std::vector<Mapped> map = mapping(model);
  ExportResult result;
  result.model = describe(c, text::lang());

  io::SafeTensors weights;
  const auto params = model.named_parameters();
  for (std::size_t i = 0; i < map.size(); ++i) {
    const ag::Tensor& p = params[i].second;
    std::vector<float> values(p.data().begin(), p.data().end());
    std::vector<std::int64_t> shape(p.shape().begin(), p.shape().end());
    if (map[i].transpose) {
      values = transposed(values, shape[0], shape[1]);
      std::swap(shape[0], shape[1]);
    }
    weights.add_f32(map[i].theirs, shape, values);
    if (one_bias(c) && map[i].theirs.rfind("rnn.bias_ih_l", 0) == 0)
      weights.add_f32("rnn.bias_hh_l" + map[i].theirs.substr(13), shape, std::vector<float>(values.size(), 0.0f));
  }
  weights.metadata["format"] = kFormat;
  weights.metadata["config"] = nlohmann::json(ck.config).dump();
  weights.metadata["step"] = std::to_string(ck.step);
  result.parameters = static_cast<int>(weights.tensors().size());

  // The run's first held-out batch, and what seqgrad makes of it.
  const tasks::TaskInfo& info = ck.task->info();
  const int B = std::min(ck.config.batch, 32);
  const tasks::Batch b = ck.task->eval_batches(B, B, train::eval_seed(ck.config.seed)).front();
  ag::NoGrad no_grad;
  const train::BatchScore score = train::score_batch(model, info, b);
  io::SafeTensors batch;
  if (!b.tokens.empty()) batch.add_i32("tokens", {b.B, b.T}, b.tokens);
  if (!b.features.empty()) batch.add_f32("features", {b.B, b.T, info.features}, b.features);
  if (info.regression)
    batch.add_f32("values", {b.B}, b.values);
  else
    batch.add_i32("targets", {b.B, b.T}, b.targets);
  const ag::Tensor& logits = score.forward.logits;
  batch.add_f32("logits", {b.B, b.T, c.out_dim}, std::vector<float>(logits.data().begin(), logits.data().end()));
  batch.metadata["loss"] = fmt::format("{:.9g}", score.loss.item());
  batch.metadata["task"] = info.name;
  result.batch = b.B;
  result.positions = b.T;
  result.loss = score.loss.item();

  fs::create_directories(out_dir);
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(out_dir, ec)) {  // what a killed export left
    const std::string name = e.path().filename().string();
    if (export_leftover(name)) fs::remove_all(e.path(), ec);
  }
  // Python's cache of an earlier model.py could be taken for the new one (same size, same second).
  for (const auto& e : fs::directory_iterator(fs::path(out_dir) / "__pycache__", ec))
    if (e.path().filename().string().rfind("model.", 0) == 0) fs::remove(e.path(), ec);
  // Every file written whole into the staging folder first (a kill meanwhile leaves the folder as it was), then each
  // renamed into place, the marker there while they move.
  std::string staging = (fs::path(out_dir) / (std::string(kStaging) + "XXXXXX")).string();
  if (!mkdtemp(staging.data()))
    throw std::runtime_error(text::msg("tools.export.no_staging", out_dir, std::strerror(errno)));
  const auto staged = [&](const std::string& name) { return (fs::path(staging) / name).string(); };
  struct Cleared {  // the staging folder goes, whatever happens from here (a write that fails, a full disk)
    std::string dir;
    ~Cleared() {
      std::error_code ignored;
      fs::remove_all(dir, ignored);
    }
  } cleared{staging};
  io::write_safetensors(staged(kWeights), weights);
  io::write_safetensors(staged(kBatch), batch);
  io::write_file(staged("model.py"), model_py(ck.config, ck.step, run_dir));
  io::write_file(staged("check.py"), kCheckPy);
  io::write_file(staged("README.md"),
                 readme(run_dir, describe(c, text::Lang::en), names_table(map, model, false), false));
  io::write_file(staged("README.ko.md"), readme(run_dir, describe_ko(c), names_table(map, model, true), true));
  const fs::path marker = fs::path(out_dir) / kIncomplete;
  io::write_file(marker.string(),
                 "an export into this folder stopped while its files were moved into place: "
                 "run seqgrad export again\n");
  for (const std::string& f : export_files()) {
    fs::rename(staged(f), fs::path(out_dir) / f);
    result.written.push_back((fs::path(out_dir) / f).string());
  }
  fs::remove(marker);
  return result;
}

ImportResult import_run(const std::string& dir, const std::string& run_dir, const std::string& text) {
  const std::string file = (fs::path(dir) / kWeights).string();
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw std::runtime_error(text::msg("tools.import.no_folder", dir));
  if (fs::exists(fs::path(dir) / kIncomplete, ec))
    throw std::runtime_error(text::msg("tools.import.incomplete", dir, kIncomplete));
  if (!fs::exists(file, ec)) throw std::runtime_error(text::msg("tools.import.no_weights", dir, kWeights));
  train::check_output_dir("--out", run_dir);
  // A new folder, or one that holds only what a killed import left (its lock, a temporary the lock clears).
  if (fs::exists(run_dir, ec))
    for (const fs::directory_entry& e : fs::directory_iterator(run_dir, ec)) {
      const std::string name = e.path().filename().string();
      if (name != train::kLockFile && !io::is_temporary_of(name, train::kCheckpointFile))
        throw std::invalid_argument(text::msg("tools.import.out_not_empty", run_dir));
    }
  const train::RunLock lock(run_dir, true);  // as train takes it: no run starts in this folder until the import ends
  const io::SafeTensors weights = io::read_safetensors(file);
  const auto meta = [&](const char* key) {
    const auto it = weights.metadata.find(key);
    if (it == weights.metadata.end()) throw std::runtime_error(text::msg("tools.import.no_metadata", file, key));
    return it->second;
  };
  if (meta("format") != kFormat)
    throw std::runtime_error(text::msg("tools.import.wrong_format", file, meta("format"), kFormat));
  train::TrainConfig config;
  try {
    config = nlohmann::json::parse(meta("config")).get<train::TrainConfig>();
  } catch (const std::exception& e) {
    throw std::runtime_error(text::msg("tools.import.config_damaged", file, e.what()));
  }
  const std::string step_text = meta("step");
  if (step_text.empty() || step_text.size() > 15 || step_text.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error(text::msg("tools.import.step_not_number", file, step_text));
  const long step = std::stol(step_text);
  if (step > config.steps)
    throw std::runtime_error(text::msg("tools.import.step_past_end", file, step_text, config.steps));
  if (!text.empty()) config.task.text_path = text;  // its fingerprint, kept, must still match
  // Everything the config says is checked before the model is built: train's limits, then the scalars the file
  // holds against those the model would (a config may not claim a model its file has no weights for), then memory.
  train::Run run = [&] {
    try {
      return train::plan_run(config);
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(text::msg("tools.import.config_unusable", file, e.what()));
    }
  }();
  double scalars = 0;
  for (const auto& [name, t] : weights.tensors()) scalars += static_cast<double>(t.bytes.size()) / 4;
  if (const double need = nn::count_parameters(run.config.model); need > scalars)
    throw std::runtime_error(text::msg("tools.import.weights_too_few", file, need, scalars));
  train::check_memory(run.config, run.task->info());
  train::build_model(run);
  const nn::SequenceModel& model = *run.model;
  const std::vector<Mapped> map = mapping(model);
  auto params = model.named_parameters();
  std::set<std::string> used;
  const auto take = [&](const std::string& name, const ag::Shape& want) {
    if (!weights.has(name)) throw std::runtime_error(text::msg("tools.import.tensor_missing", file, name));
    const io::TensorData& t = weights.at(name);
    if (t.dtype != "F32") throw std::runtime_error(text::msg("tools.import.tensor_dtype", file, name, t.dtype));
    if (t.shape != std::vector<std::int64_t>(want.begin(), want.end()))
      throw std::runtime_error(text::msg("tools.import.tensor_shape", file, name,
                                         ag::to_string(ag::Shape(t.shape.begin(), t.shape.end())),
                                         ag::to_string(want)));
    used.insert(name);
    std::vector<float> values = weights.f32(name);
    if (const auto bad = std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
        bad != values.end())
      throw std::runtime_error(text::msg("tools.import.tensor_not_finite", file, name, bad - values.begin(), *bad));
    return values;
  };
  for (std::size_t i = 0; i < map.size(); ++i) {
    ag::Tensor& p = params[i].second;
    const ag::Shape& s = p.shape();
    std::vector<float> values =
        map[i].transpose ? transposed(take(map[i].theirs, {s[1], s[0]}), s[1], s[0]) : take(map[i].theirs, s);
    if (one_bias(model.config()) && map[i].theirs.rfind("rnn.bias_ih_l", 0) == 0) {
      // PyTorch's two biases add; the export's bias_hh is 0, kept so (not summed) that b comes back bit for bit.
      const std::vector<float> other = take("rnn.bias_hh_l" + map[i].theirs.substr(13), s);
      if (std::any_of(other.begin(), other.end(), [](float v) { return v != 0; }))
        for (std::size_t k = 0; k < values.size(); ++k) values[k] += other[k];
    }
    std::copy(values.begin(), values.end(), p.data().begin());
  }
  for (const auto& [name, t] : weights.tensors())
    if (!used.count(name)) throw std::runtime_error(text::msg("tools.import.tensor_extra", file, name));
  // The run must be one the tools can read: one held-out batch through it, a finite loss.
  const tasks::Batch probe = run.task->eval_batches(1, 1, train::eval_seed(run.config.seed)).front();
  double loss = 0;
  try {
    ag::NoGrad no_grad;
    loss = train::score_batch(model, run.task->info(), probe).loss.item();
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(text::msg("tools.import.cannot_read_task", file, e.what()));
  }
  if (!std::isfinite(loss)) throw std::runtime_error(text::msg("tools.import.loss_not_finite", file, loss));
  train::save_checkpoint(run_dir, run.config, model, *run.optimizer, step);
  return {describe(model.config(), text::lang()), step, static_cast<int>(used.size())};
}

}  // namespace seqgrad::pytorch
