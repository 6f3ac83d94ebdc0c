// The bad-input table: every wrong input a student might type, the exit code
// it must give and a piece of the one line it must print (in English). Used by
// test_bad_input.cpp (the line and the code) and test_korean.cpp (the same
// inputs in Korean).
#pragma once

#include <sys/stat.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "seqgrad_catch.hpp"

#include "../temp_path.h"
#include "run_command.h"

namespace test::bad_input {

using test::run_seqgrad;

inline const std::string kDir = test::temp_path("bad-input");

inline std::string write(const std::string& name, const std::string& content) {
  std::ofstream(kDir + "/" + name, std::ios::binary) << content;
  return kDir + "/" + name;
}

// A copy of the export tf-export whose weights file `edit` changes (its header, its data), without its checksum.
inline void edited_export(const std::string& name, const std::function<void(nlohmann::json&, std::string&)>& edit) {
  std::ifstream in(kDir + "/tf-export/weights.safetensors", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::uint64_t n = 0;
  for (int i = 0; i < 8; ++i) n |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[i])) << (8 * i);
  nlohmann::json header = nlohmann::json::parse(bytes.substr(8, n));
  std::string data = bytes.substr(8 + n);
  header["__metadata__"].erase("checksum");
  edit(header, data);
  const std::string text = header.dump();
  std::string length(8, '\0');
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>(text.size() >> (8 * i));
  std::filesystem::create_directories(kDir + "/" + name);
  std::ofstream(kDir + "/" + name + "/weights.safetensors", std::ios::binary) << length << text << data;
}

// The same, with one field of the run's config set to `value`.
inline void export_with_config(const std::string& name, const nlohmann::json::json_pointer& field,
                               const nlohmann::json& value) {
  edited_export(name, [&](nlohmann::json& header, std::string&) {
    nlohmann::json config = nlohmann::json::parse(header["__metadata__"]["config"].get<std::string>());
    config[field] = value;
    header["__metadata__"]["config"] = config.dump();
  });
}

// Fixtures: odd files, and three small run directories (a Transformer, an RNN, a damaged one).
inline void prepare() {
  static bool done = false;
  if (done) return;
  std::filesystem::remove_all(kDir);
  std::filesystem::create_directories(kDir + "/empty-run");
  std::filesystem::create_directories(kDir + "/stub-dir/attention.cpp");  // a folder where a stub would go
  write("empty.txt", "");
  write("binary.txt", std::string("abc\0def", 7));
  write("latin1.txt", "caf\xe9 au lait, caf\xe9 noir");
  write("short.txt", "only a few words here");
  // Stand-ins for the PyTorch reference, run by sh: one that answers, one that lacks torch.
  write("reference.sh", "echo '[{\"workload\": \"rnn-fused\", \"ms_per_step_median\": 1000.0}]'\n");
  write("hanging-reference.sh", "sleep 60\n");
  write("failing-reference.sh",
        "echo 'Traceback (most recent call last):'; echo \"ModuleNotFoundError: No module named 'torch'\"; exit 1\n");
  const std::string common = " --len 4 --d-model 8 --steps 3 --batch 4 --eval-size 4 --out ";
  REQUIRE(run_seqgrad("train --model transformer --heads 2 --task recall" + common + kDir + "/tf").exit_code == 0);
  REQUIRE(run_seqgrad("train --model rnn --task recall" + common + kDir + "/rnn").exit_code == 0);
  REQUIRE(run_seqgrad("train --model gru --task recall" + common + kDir + "/damaged").exit_code == 0);
  std::filesystem::resize_file(kDir + "/damaged/checkpoint.safetensors", 300);
  // An export to PyTorch, and a folder whose weights file is a checkpoint (another layout).
  REQUIRE(run_seqgrad("export " + kDir + "/tf --out " + kDir + "/tf-export").exit_code == 0);
  std::filesystem::create_directories(kDir + "/not-an-export");
  std::filesystem::copy_file(kDir + "/rnn/checkpoint.safetensors", kDir + "/not-an-export/weights.safetensors");
  // Exports whose config claims more than their tensors hold, or more than train allows; a NaN in a row of the
  // embedding that the held-out probe does not read; a gigabyte past the header's data (sparse: no disk used).
  edited_export("huge-export", [](nlohmann::json& header, std::string&) {
    nlohmann::json config = nlohmann::json::parse(header["__metadata__"]["config"].get<std::string>());
    config["model"]["d_model"] = 4096;
    config["model"]["layers"] = 6;
    header["__metadata__"]["config"] = config.dump();
  });
  export_with_config("batch-export", "/batch"_json_pointer, 1000000000);
  export_with_config("eval-export", "/eval_size"_json_pointer, 20000000);
  edited_export("nan-export", [](nlohmann::json& header, std::string& data) {
    const auto& e = header["embed.weight"];
    const std::size_t last = e["data_offsets"][1].get<std::size_t>() - 4;
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(data.data() + last, &nan, 4);
  });
  std::filesystem::create_directories(kDir + "/sparse-export");
  std::filesystem::copy_file(kDir + "/tf-export/weights.safetensors", kDir + "/sparse-export/weights.safetensors");
  std::filesystem::resize_file(kDir + "/sparse-export/weights.safetensors", 1ULL << 30);
  // A run directory whose checkpoint is a FIFO: reading it whole would wait forever.
  std::filesystem::create_directories(kDir + "/fifo-run");
  REQUIRE(mkfifo((kDir + "/fifo-run/checkpoint.safetensors").c_str(), 0644) == 0);
  done = true;
}

struct Case {
  std::string args;
  int code;
  std::string says;  // a piece of the one line it must print
};

// The table, its fixtures made first (once).
inline std::vector<Case> cases() {
  prepare();
  const std::string d = kDir;
  return {
      {"", 2, "a command is required"},
      {"frobnicate", 2, "unknown command 'frobnicate'"},
      {"train --model cnn", 2, "--model: cnn not in"},
      {"train --task frob", 2, "--task: frob not in"},
      {"train --pos absolute", 2, "--pos: absolute not in"},
      {"train --attention quadratic", 2, "--attention: quadratic not in"},
      {"paths --recurrent-form", 2, "--recurrent-form computes linear attention as a recurrence; it needs --attention"},
      {"paths --models rnn --attention linear", 2, "--attention is the Transformer's attention; --models names no"},
      {"train --task recall --keys 8", 2, "--keys is only for the assoc task"},
      {"train --task assoc --len 20", 2, "--len for assoc must be between 1 and 16, got 20"},
      {"train --task assoc --keys 0", 2, "--keys: Value 0 not in range 1 to 1000"},
      {"train --attention linear --no-scale", 2, "linear attention has no scores to divide by sqrt(d_k)"},
      {"train --model gru --attention linear", 2, "--attention is the Transformer's: --model gru has no attention"},
      {"train --steps -1", 2, "--steps"},
      {"train --batch 0", 2, "--batch"},
      {"train --batch -3", 2, "--batch"},
      {"train --heads 0", 2, "--heads"},
      {"train --heads -2", 2, "--heads"},
      {"train --d-model 0", 2, "--d-model"},
      {"train --layers 0", 2, "--layers"},
      {"train --len -4", 2, "--len"},
      {"train --lr 0", 2, "--lr: must be a finite number > 0, got '0'"},
      {"lab attention-by-hand --vectors 1,x", 2, "--vectors: 'x' in '1,x' is not a number"},
      {"lab attention-by-hand --vectors \"1,0 1\"", 2, "every vector needs the same, non-zero length"},
      {"lab attention-by-hand --vectors \"1,0 0,1\" --query 5", 2, "the query must be one of the vectors"},
      {"lab rope --query 1", 2, "--query requires --vectors"},
      {"lab rope --vectors \"1,0 0,1\"", 2, "--vectors and --query are for the attention-by-hand lab"},
      {"lab attention-by-hand --query 2", 2, "--query requires --vectors"},
      {"lab attention-by-hand --vectors \"\"", 2, "--vectors is empty"},
      {"lab rope --answer 1", 2,
       "the lab rope asks no question; --answer and --predict are for attention-by-hand, "
       "quadratic-cost"},
      {"lab attention-by-hand --answer 0.4,0.4", 2, "the answer has 2 numbers; write one number per vector"},
      {"lab attention-by-hand --answer a,b,c", 2, "the answer names vectors but gives no numbers; write one number"},
      {"lab attention-by-hand --answer \"0.4,0.4,0.2 d\"", 2, "'d' is not a number; write one number per vector"},
      {"lab attention-by-hand --answer \" \"", 2, "--answer is empty"},
      {"lab quadratic-cost --answer 100 --reveal", 2, "--answer excludes --reveal"},
      {"lab attention-by-hand --answer 1,1,1 --vectors \"1,0 0,1\"", 2, "--vectors excludes --answer"},
      {"lab quadratic-cost --predict", 2, "no answer: the input ended before one was typed"},
      {"train --task words --len 5000", 2, "--len: Value 5000 not in range"},
      {"train --task lookback --len 3", 2, "--len for lookback must be between 5 and 4096, got 3"},
      {"train --model gru --tie-qk", 2, "--tie-qk is the Transformer's: --model gru has no attention"},
      {"train --model lstm --tie-kv", 2, "--tie-kv is the Transformer's: --model lstm has no attention"},
      {"train --no-value --tie-kv", 2, "--no-value and --tie-kv: choose one (the values are X, or they are the keys)"},
      {"train --model transformer --task copy --no-causal", 2,
       "--no-causal on copy would let each position read its own answer"},
      {"train --model transformer --task words --no-causal", 2,
       "--no-causal on words would let each position read its own answer"},
      {"train --lr -1", 2, "--lr: must be a finite number > 0"},
      {"train --lr nan", 2, "--lr: must be a finite number > 0, got 'nan'"},
      {"train --lr inf", 2, "--lr: must be a finite number > 0, got 'inf'"},
      {"train --lr 1e-3x", 2, "--lr: must be a finite number > 0"},
      {"train --d-model 10 --heads 4 --out " + d + "/x", 2, "d_model 10 is not divisible by heads 4"},
      {"train --task lm --text /nonexistent.txt --out " + d + "/x", 2, "cannot read the text file /nonexistent.txt"},
      {"train --task lm --text " + d + "/empty.txt --out " + d + "/x", 2, "empty.txt is empty"},
      {"train --task lm --text " + d + "/binary.txt --out " + d + "/x", 2, "looks binary"},
      {"train --task lm --text " + d + "/latin1.txt --out " + d + "/x", 2, "is not valid UTF-8"},
      {"train --task lm --text " + d + "/short.txt --out " + d + "/x", 2, "too few for --len 64"},
      {"train --task lm --text " + d + " --out " + d + "/x", 2, "is not a regular file"},
      {"train --task copy --len 100000", 2, "--len"},
      {"train --task copy --len 1000 --out " + d + "/x", 2, "--len for copy must be between 1 and 512, got 1000"},
      {"train --task adding --len 1 --out " + d + "/x", 2, "--len for adding must be between 2 and 4096, got 1"},
      {"train --dropout 1.5", 2, "--dropout"},
      {"train --optimizer rmsprop", 2, "--optimizer: rmsprop not in"},
      {"train --schedule linear", 2, "--schedule: linear not in"},
      {"train --seed -1", 2, "--seed: a seed is a whole number >= 0, got '-1'"},
      {"train --clip -1", 2, "--clip"},
      {"train --warmup -5", 2, "--warmup"},
      {"train --eval-size 0", 2, "--eval-size"},
      {"train --steps ten", 2, "--steps"},
      {"train --resume /nonexistent/run", 1, "no run directory at /nonexistent/run"},
      {"train --resume " + d + "/damaged", 1, "checkpoint.safetensors"},
      {"train --resume " + d + "/tf --steps 1", 2, "past the --steps 1 asked for"},
      {"train --resume " + d + "/tf --model lstm", 2, "--model cannot be changed when resuming"},
      {"train --out /proc/seqgrad-cannot-be-here --steps 1", 1, "/proc/seqgrad-cannot-be-here"},
      {"eval /nonexistent/run", 1, "no run directory at /nonexistent/run"},
      {"eval " + d + "/empty-run", 1, "holds no checkpoint (checkpoint.safetensors is missing)"},
      {"eval " + d + "/damaged", 1, "checkpoint.safetensors"},
      {"eval", 2, "dir is required"},
      {"sample " + d + "/tf --count 0", 2, "--count"},
      {"attention " + d + "/rnn", 2, "a rnn has no attention to show"},
      {"attention " + d + "/tf --input 'A zz ?'", 2, "--input: 'zz' is not a token of the recall task"},
      {"grads --models cnn", 2, "--models: unknown model 'cnn'"},
      {"attention " + d + "/tf --input 'A a b c d e ?'", 2, "beyond the 5 this model was built for"},
      {"attention " + d + "/tf --query 5", 2, "--query: position 5 is not in the input: its positions are 0 to 4"},
      {"attention " + d + "/tf --query -1", 2, "--query: position -1 is not in the input: its positions are 0 to 4"},
      {"attention " + d + "/tf --input 'A a ?' --query 3", 2, "--query: position 3 is not in the input"},
      {"attention " + d + "/tf --query x", 2, "--query: 'x' is not a position; give a whole number"},
      {"attention " + d + "/tf --query 1.5", 2, "--query: '1.5' is not a position"},
      {"grads --models foo", 2, "unknown model 'foo'"},
      {"grads --batch 0", 2, "--batch"},
      {"grads --checkpoint " + d + "/damaged", 1, "checkpoint.safetensors"},
      {"paths --lens 1", 2, "--lens: '1' is not a length between 2 and 4096"},
      {"compare --steps 0", 2, "--steps"},
      {"graph --steps 0", 2, "--steps"},
      {"gradcheck --seed x", 2, "--seed: a seed is a whole number >= 0, got 'x'"},
      {"eval " + d + "/fifo-run", 1,
       d + "/fifo-run/checkpoint.safetensors is not a regular file (a checkpoint is one)"},
      {"train --resume " + d + "/fifo-run", 1, "is not a regular file"},
      {"train --model rnn --task copy --len 4 --d-model 8 --steps 1 --batch 4 --lr 1e308 --overwrite --out " + d +
           "/huge-lr",
       1, "training diverged at step 1: the update made the weights not finite"},
      {"bench --reference /nonexistent/torch_reference.py", 2,
       "--reference: no file at /nonexistent/torch_reference.py"},
      {"bench --reference /dev/null --sweep len", 2,
       "--reference times the standard workloads; it does not go with --sweep"},
      {"bench --reference " + d + "/reference.sh --python /bin/sh --rounds 0", 2, "--rounds"},
      {"bench --reference " + d + "/failing-reference.sh --python /bin/sh --workload rnn --steps 1", 1,
       "failed: ModuleNotFoundError: No module named 'torch' (it needs Debian's python3-torch)"},
      {"bench --reference " + d +
           "/hanging-reference.sh --python /bin/sh --workload rnn --steps 1 --reference-timeout 1",
       1, "hanging-reference.sh) did not finish within 1 s (--reference-timeout)"},
      // An option that would change nothing is refused, never ignored: on --resume, for the model, in each command.
      {"train --resume " + d + "/tf --no-ffn", 2, "--no-ffn cannot be changed when resuming"},
      {"train --resume " + d + "/tf --dropout 0.1", 2, "--dropout cannot be changed when resuming"},
      {"train --resume " + d + "/tf --overwrite", 2, "--overwrite cannot be changed when resuming"},
      {"train --resume " + d + "/tf --save-grads " + d + "/tf/checkpoint.safetensors", 2,
       "would replace the run's own checkpoint.safetensors"},
      {"train --model rnn --heads 2", 2, "--heads is the Transformer's: --model rnn has no attention"},
      {"train --model lstm --dropout 0.2", 2, "--dropout has no effect on a one-layer recurrent model"},
      {"train --model transformer --init orthogonal", 2, "--init is the recurrent models'"},
      {"train --model transformer --no-ffn --ffn-mult 2", 2, "--ffn-mult has no effect with --no-ffn"},
      {"train --momentum 0.5", 2, "--momentum is SGD's: --optimizer adam does not use it"},
      {"train --model gru --warmup 10", 2, "--warmup has no effect with the constant schedule"},
      {"grads --checkpoint " + d + "/tf --d-model 99", 2, "--d-model has no effect with --checkpoint"},
      {"grads --steps 10", 2, "--steps is the training length of --every"},
      {"grads --models transformer --init orthogonal", 2, "--init is the recurrent models'"},
      {"sample " + d + "/tf --prompt abc", 2, "--prompt is for a run on text (lm, words)"},
      {"compare --models rnn,rnn", 2, "names rnn twice"},
      {"compare --models transformer --match-params", 2, "--match-params sizes the recurrent models"},
      {"bench --rounds 3", 2, "--rounds is for --reference, which is not given"},
      {"bench --sweep-max 64", 2, "--sweep-max is for --sweep len"},
      {"bench --sweep len --threads 2", 2, "--threads has no effect with --sweep"},
      // Messages that name what is wrong: a number's base, one too small, a name that is not UTF-8, a newline.
      {"train --batch 0x10", 2, "--batch 0x10: write numbers in decimal"},
      {"train --steps=0x10", 2, "--steps 0x10: write numbers in decimal"},
      {"train --lr 1e-320", 2, "'1e-320' is too small to compute with"},
      {"train --out \"$(printf 'r\\377')\"", 2, "argument 3 ('r\\xff') is not valid UTF-8 (byte 1)"},
      {"eval \"$(printf 'a\\nseqgrad: forged')\"", 1, "no run directory at a\\nseqgrad: forged"},
      // Round three (files and runs): an --overwrite refused leaves the old run (tf is used below), outputs that
      // would replace a run's file or the command's input, a text not the run's, and the small ones.
      {"train --model transformer --d-model 30 --heads 4 --out " + d + "/tf --overwrite", 2,
       "d_model 30 is not divisible by heads 4"},
      {"grads --csv " + d + "/tf/log.csv", 2, "--csv " + d + "/tf/log.csv would replace the log.csv of the run"},
      {"graph --out " + d + "/rnn/checkpoint.safetensors", 2, "would replace the checkpoint.safetensors of the run"},
      {"train --task lm --text " + d + "/short.txt --save-grads " + d + "/short.txt --out " + d + "/x", 2,
       "--save-grads " + d + "/short.txt would replace the run's text"},
      {"attention " + d + "/tf --out " + d + "/short.txt", 2, "--out " + d + "/short.txt is a file; name a directory"},
      {"train --resume " + d + "/tf --text " + d + "/short.txt", 1, "--text is only for the lm and words tasks"},
      {"lab attention-by-hand --answer ''", 2, "--answer is empty; give your answer, or --reveal"},
      {"lab attention-by-hand --answer 0x1p-1,0.5,0", 2, "'0x1p-1' is not a number"},
      {"lab attention-by-hand --answer inf,0,0", 2, "'inf' is not a number"},
      {"lab attention-by-hand --vectors \"1e200,0 0,1e200\"", 2, "--vectors: the numbers are too large"},
      {"exercise check-all --dir " + d + "/no-such-dir", 2, "there is no directory " + d + "/no-such-dir"},
      {"exercise start attention --dir ''", 2, "--dir is empty; name the folder of your exercise files"},
      {"exercise check-all --dir ''", 2, "--dir is empty"},
      {"exercise start attention --force --dir " + d + "/stub-dir", 1,
       d + "/stub-dir/attention.cpp is there and is not a file (a folder?): left as it is"},
      {"bench --reference-timeout nan", 2, "--reference-timeout: must be a finite number in [1, 86400], got 'nan'"},
      {"exercise check attention --timeout nan", 2, "--timeout: must be a finite number in [0.1, 3600], got 'nan'"},
      {"train --dropout nan", 2, "--dropout: must be a finite number in [0, 0.95], got 'nan'"},
      {"train --clip -inf", 2, "--clip: must be a finite number in [0, 1e+09], got '-inf'"},
      {"sample " + d + "/tf --temperature nan", 2, "--temperature: must be a finite number in [0, 100], got 'nan'"},
      {"lab shared-weights --seed 3", 2, "the lab shared-weights draws nothing at random"},
      {"lab context-vector --seeds 0-4", 2, "the lab context-vector draws nothing at random"},
      {"lab two-walls --steps 100", 2, "the lab two-walls does not train; --steps is for clipping"},
      {"lab clipping --steps 0", 2, "--steps 0 is out of range: give 1 to 1000000"},
      {"lab clipping --seeds 0-4 --steps -5", 2, "--steps -5 is out of range"},
      {"lab value-proj --seeds 3-3", 2, "the claim of the lab value-proj compares seeds"},
      {"lab clipping --seed -1", 2, "--seed: '-1' is not a seed; give a whole number from 0"},
      {"lab clipping --seed 1.5", 2, "--seed: '1.5' is not a seed"},
      {"lab clipping --seeds 4-2", 2, "--seeds 4-2: the range runs backwards"},
      {"lab clipping --seeds 0-100", 2, "--seeds 0-100: 101 seeds are too many for one command"},
      {"lab clipping --seeds 0-", 2, "--seeds: '0-' is not a seed"},
      {"lab clipping --seeds -1-3", 2, "--seeds: '-1-3' is not a seed; give a whole number from 0"},
      {"lab clipping --seed 18446744073709551615", 2,
       "--seed: 18446744073709551615 is too large for a seed; give a whole number from 0 to 999999999999999999"},
      {"train --seed 18446744073709551615", 2, "a seed has at most 19 digits (0 to 9999999999999999999)"},
      {"lab clipping --seed 1 --seeds 0-2", 2, "--seed excludes --seeds"},
      {"lab attention-by-hand --seeds 0-2 --answer 0.4,0.4,0.2", 2, "excludes"},
      // export and import: what is not a run or an export, and outputs that would replace one.
      {"export " + d + "/tf-export --out " + d + "/x", 1, d + "/tf-export holds no checkpoint"},
      {"export " + d + "/damaged --out " + d + "/x", 1, "runs past the end of the file"},
      {"export " + d + "/tf --out " + d + "/rnn", 2, "--out " + d + "/rnn is a run directory"},
      {"export " + d + "/tf --out " + d, 2, "already holds files; name a new folder, or give --overwrite"},
      {"export " + d + "/tf --to tensorflow --out " + d + "/x", 2, "--to: tensorflow not in {pytorch}"},
      {"export " + d + "/tf", 2, "--out is required"},
      {"export " + d + "/tf --out ''", 2, "--out is empty; name the folder to write the export into"},
      {"import " + d + "/no-such-export --out " + d + "/x", 1, "no export folder at " + d + "/no-such-export"},
      {"import " + d + "/tf --out " + d + "/x", 1, d + "/tf holds no weights.safetensors"},
      {"import " + d + "/not-an-export --out " + d + "/x", 1, "format 'seqgrad checkpoint 1', not 'seqgrad pytorch"},
      {"import " + d + "/tf-export --out " + d + "/rnn", 2, "--out " + d + "/rnn already holds files"},
      {"import " + d + "/tf-export --out " + d + "/short.txt", 2, "is a file; name a directory"},
      {"import " + d + "/huge-export --out " + d + "/x", 1,
       "its config names a model of 1208418321 weights, but the file holds"},
      {"import " + d + "/batch-export --out " + d + "/x", 1, "--batch must be at most 65536, got 1000000000"},
      {"import " + d + "/eval-export --out " + d + "/x", 1, "--eval-size must be at most 1000000, got 20000000"},
      {"import " + d + "/nan-export --out " + d + "/x", 1, "tensor 'embed.weight' holds a value that is not finite"},
      {"import " + d + "/sparse-export --out " + d + "/x", 1, "bytes that belong to no tensor"},
  };
}

}  // namespace test::bad_input
