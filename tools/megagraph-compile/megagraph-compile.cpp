//===- megagraph-compile.cpp - The MegaGraph compiler driver ----*- C++ -*-===//
//
// Part of MegaGraph. Takes a model exported from PyTorch as ONNX (binary
// `.onnx`, or ONNX text `.onnxtxt`) or a `.mlir` module and runs the
// pipeline up to the stage named by --emit:
//
//   mlir  the imported module (TOSA + linalg.softmax + gt + ml_program)
//   gt    after gt-raise: attention, biases, embeddings as gt ops
//   llvm  LLVM IR for the host CPU (after gt-decompose, bufferization, ...)
//   obj   an object file
//   exe   an executable linked with libmegagraph_rt (run it with
//         `--mode infer --input NAME=FILE.npy ... --output-dir DIR`)
//
//   plan  the parallel plan as JSON (searched, or the given --plan priced)
//
// Errors are one
// line each: `FILE:LINE:COL: error: ...` for problems of the model (node errors
// name the node, op type and opset), and `megagraph-compile: error: ...` for
// problems of the command line; the exit code is 1. The IR a failure
// concerns is printed only with --debug-ir.
//
//===----------------------------------------------------------------------===//

#include "megagraph/Dialect/GT/GTAttrs.h"
#include "megagraph/Dialect/GT/GTNames.h"
#include "megagraph/Import/OnnxImporter.h"
#include "megagraph/InitAllMegaGraph.h"
#include "megagraph/Passes/Passes.h"
#include "megagraph/Pipelines/Pipelines.h"
#include "megagraph/Plan/ParallelPlan.h"
#include "megagraph/Plan/Profile.h"
#include "megagraph/Support/ModelNames.h"
#include "megagraph/Target/CpuTarget.h"
#include "megagraph/Target/CudaTarget.h"
#include "megagraph/Target/Executable.h"

#include "PlanChoice.h"
#include "PlanReport.h"
#include "Progress.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MLProgram/IR/MLProgram.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <unistd.h>

using namespace mlir;
using namespace llvm;

namespace {

enum class Emit { Mlir, Gt, Plan, Llvm, Obj, Exe };

cl::OptionCategory category("megagraph-compile options");

cl::opt<std::string> inputFile(cl::Positional,
                               cl::desc("<model.onnx | model.onnxtxt | "
                                        "model.mlir>"),
                               cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Output file (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(category));
cl::opt<Emit> emit(
    "emit", cl::desc("Stage to stop at and print"), cl::init(Emit::Gt),
    cl::values(
        clEnumValN(Emit::Mlir, "mlir", "the imported module"),
        clEnumValN(Emit::Gt, "gt", "after raising to the gt dialect (default)"),
        clEnumValN(Emit::Plan, "plan",
                   "the parallel plan as JSON (searched, or --plan priced)"),
        clEnumValN(Emit::Llvm, "llvm", "LLVM IR for the host CPU"),
        clEnumValN(Emit::Obj, "obj", "an object file"),
        clEnumValN(Emit::Exe, "exe", "an executable linked with the runtime")),
    cl::cat(category));
cl::list<std::string>
    inputShapes("input-shape",
                cl::desc("Static shape of a graph input with dynamic dims, "
                         "NAME=D0xD1x... (repeatable); edge_index=2xE for a "
                         "model with an adj_norm input replaces that dense "
                         "adjacency by an edge list of E edges"),
                cl::value_desc("NAME=D0xD1x..."), cl::cat(category));
cl::list<std::string> freezeInitializers(
    "freeze",
    cl::desc("Import float initializers whose whole name matches REGEX as "
             "constants, not trainable parameters (repeatable)"),
    cl::value_desc("REGEX"), cl::cat(category));
cl::list<std::string> trainableInitializers(
    "trainable",
    cl::desc("Train float initializers whose whole name matches REGEX even "
             "where the importer takes them for constants (repeatable; "
             "wins over --freeze)"),
    cl::value_desc("REGEX"), cl::cat(category));
cl::opt<bool> keepTiedInitializers(
    "keep-tied-initializers",
    cl::desc("Train a float initializer that several nodes use as one "
             "parameter (by default each node gets its own copy, as the "
             "TorchScript exporter merges parameters of equal value)"),
    cl::cat(category));
cl::opt<bool> referenceAttention(
    "reference-attention",
    cl::desc("Lower gt.attention to explicit scores and softmax instead of "
             "the fused runtime kernel (for testing)"),
    cl::cat(category));
cl::opt<bool> gradients(
    "gradients",
    cl::desc("Compile the gradient function instead of the forward: "
             "inputs + labels + label_mask -> loss + one gradient per "
             "parameter (gt-autodiff; for checking gradients)"),
    cl::cat(category));
cl::opt<bool> train(
    "train",
    cl::desc("Compile a training step: forward, masked cross-entropy loss, "
             "backward and optimizer update (run with --mode train)"),
    cl::cat(category));
cl::opt<std::string>
    loss("loss",
         cl::desc("Training loss over the items label_mask counts: "
                  "cross_entropy or nll (int64 class labels), mse, l1 or "
                  "bce_with_logits (float labels of the prediction's shape)"),
         cl::value_desc("NAME"), cl::init("cross_entropy"), cl::cat(category));
cl::opt<std::string>
    lossOutput("loss-output",
               cl::desc("The model output the loss applies to (default: the "
                        "first)"),
               cl::value_desc("NAME"), cl::init(""), cl::cat(category));
cl::opt<std::string> optimizerName(
    "optimizer",
    cl::desc("Training optimizer: sgd (torch.optim.SGD), adam "
             "(torch.optim.Adam, L2 weight decay) or adamw (torch.optim.AdamW, "
             "decoupled weight decay)"),
    cl::init("adamw"), cl::cat(category));
cl::opt<double> learningRate("lr",
                             cl::desc("Learning rate (the peak of a "
                                      "schedule; positive)"),
                             cl::init(1e-3), cl::cat(category));
cl::opt<double> weightDecay("weight-decay",
                            cl::desc("Weight decay: L2 (added to the "
                                     "gradient) for sgd and adam, decoupled "
                                     "for adamw"),
                            cl::init(0.0), cl::cat(category));
cl::opt<double> momentum("momentum", cl::desc("sgd: momentum in [0, 1)"),
                         cl::init(0.0), cl::cat(category));
cl::opt<double> dampening("dampening",
                          cl::desc("sgd: dampening of the momentum, in [0, 1]"),
                          cl::init(0.0), cl::cat(category));
cl::opt<bool> nesterov("nesterov",
                       cl::desc("sgd: Nesterov momentum (needs --momentum, "
                                "no --dampening)"),
                       cl::cat(category));
cl::opt<double> beta1("beta1", cl::desc("adam/adamw: beta1 in [0, 1)"),
                      cl::init(0.9), cl::cat(category));
cl::opt<double> beta2("beta2", cl::desc("adam/adamw: beta2 in [0, 1)"),
                      cl::init(0.999), cl::cat(category));
cl::opt<double> epsilon("eps", cl::desc("adam/adamw: epsilon (positive)"),
                        cl::init(1e-8), cl::cat(category));
cl::opt<std::string> lrSchedule(
    "lr-schedule",
    cl::desc("Learning-rate schedule after the linear warmup, as in "
             "Hugging Face transformers: constant, linear, cosine or "
             "polynomial (see docs/training.md)"),
    cl::init("constant"), cl::cat(category));
cl::opt<int64_t> warmupSteps("warmup-steps",
                             cl::desc("Steps of linear warmup from 0 to --lr"),
                             cl::value_desc("N"), cl::init(0),
                             cl::cat(category));
cl::opt<int64_t> totalSteps(
    "total-steps",
    cl::desc("Step at which the decay of a linear, cosine or polynomial "
             "schedule ends (at least --warmup-steps)"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
cl::opt<double> minLr("min-lr",
                      cl::desc("cosine, polynomial: learning rate at the end "
                               "of the decay (default 0)"),
                      cl::init(0.0), cl::cat(category));
cl::opt<double> power("power",
                      cl::desc("polynomial: exponent of the decay (default 1)"),
                      cl::init(1.0), cl::cat(category));
cl::opt<double> clipGradNorm(
    "clip-grad-norm",
    cl::desc("Scale the gradients so that their global 2-norm is at most "
             "MAX (torch.nn.utils.clip_grad_norm_; not with pp > 1 or "
             "ZeRO)"),
    cl::value_desc("MAX"), cl::init(0.0), cl::cat(category));
cl::opt<std::string> planSpec(
    "plan",
    cl::desc("Parallel plan for --train, keys in any order: dp=P (data "
             "parallel; the compiled batch is each replica's), "
             "zero=0|1|2|3 (ZeRO stage of the dp group), cp=C "
             "(context parallel: S / C nodes of every sequence per rank) "
             "with cp_mode=allgather|ring|ulysses (ulysses: cp divides "
             "the heads), pp=K (pipeline stages) with "
             "mb=M (micro-batches per step; export the model at the "
             "micro-batch size), stages=a:b:... (first unit of each stage) "
             "and recompute=1; launch with mpirun -np dp*pp*cp. Without "
             "--plan, --devices searches one"),
    cl::value_desc("dp=P,pp=K,cp=C,..."), cl::cat(category));
cl::opt<std::string> runtimeDir(
    "runtime-dir",
    cl::desc("Directory holding libmegagraph_rt.a (default: the build's)"),
    cl::value_desc("dir"), cl::init(MEGAGRAPH_RUNTIME_LIB_DIR),
    cl::cat(category));
cl::opt<megagraph::Target> target(
    "target", cl::desc("Where the compiled step runs"),
    cl::init(megagraph::Target::Cpu),
    cl::values(clEnumValN(megagraph::Target::Cpu, "cpu",
                          "the host CPU (default)"),
               clEnumValN(megagraph::Target::Cuda, "cuda",
                          "an NVIDIA GPU: kernels as PTX, cuBLAS GEMMs, fused "
                          "flash attention; parameters and optimizer state "
                          "stay on the device")),
    cl::cat(category));
cl::opt<std::string> cudaArch(
    "cuda-arch",
    cl::desc("PTX target of --target cuda (the driver JIT-compiles it for "
             "the GPU at hand; default sm_80 runs on Ampere and later)"),
    cl::value_desc("sm_XY"), cl::init("sm_80"), cl::cat(category));
cl::opt<std::string> precision(
    "precision",
    cl::desc("Precision of the GEMMs and the fused attention: fp32 "
             "(default) or bf16 (operands rounded to bfloat16, products "
             "summed in float32: tensor cores on a GPU; master weights, "
             "optimizer state, softmax statistics and the loss stay "
             "float32)"),
    cl::value_desc("fp32|bf16"), cl::init("fp32"), cl::cat(category));
cl::opt<bool> cudaEmulate(
    "cuda-emulate-on-host", cl::Hidden,
    cl::desc("Testing: a CPU program whose loop nests run as --target "
             "cuda's kernels, emulated by host loops over blocks and threads"),
    cl::cat(category));
cl::opt<unsigned> optLevel("O", cl::desc("LLVM optimization level (0-3)"),
                           cl::Prefix, cl::init(3), cl::cat(category));
// The plan search (PlanChoice.cpp).
cl::opt<int64_t> devices(
    "devices",
    cl::desc("Devices (MPI ranks) to train on: without --plan the plan "
             "search chooses dp x pp x cp, ZeRO, micro-batches for them "
             "(the model's batch is then the global batch)"),
    cl::value_desc("P"), cl::init(0), cl::cat(category));
cl::opt<std::string> deviceMemory(
    "device-memory",
    cl::desc("Per-device memory budget of the plan search (e.g. 2GiB; "
             "default: the profile's device memory)"),
    cl::value_desc("BYTES"), cl::cat(category));
cl::opt<std::string> profileName(
    "profile",
    cl::desc("Hardware profile of the plan search and of the pipeline "
             "stage split's unit costs: cpu-here, a100, h100, h200, or a "
             "JSON file from megagraph-profile"),
    cl::value_desc("NAME|FILE"), cl::init("cpu-here"), cl::cat(category));
cl::opt<std::string> graphStats(
    "graph-stats",
    cl::desc("The graph a full-graph GCN trains on (JSON of EXE --mode "
             "graph-stats): the plan search chooses between mop=P and gp=P "
             "from its size, degrees and METIS halo"),
    cl::value_desc("FILE"), cl::cat(category));
cl::opt<bool> searchMoa(
    "moa",
    cl::desc("Full-graph GCN plan search: also consider the mixture of "
             "accelerators pipeline (moa=1) and choose its chunk count"),
    cl::cat(category));
cl::opt<std::string> planReport(
    "plan-report",
    cl::desc("With --train: write the plan (device grid, memory per device, "
             "pipeline schedule, ranked alternatives) as DIR/index.html and "
             "DIR/plan.json"),
    cl::value_desc("DIR"), cl::cat(category));
cl::opt<bool> progressFlag(
    "progress",
    cl::desc("Print each phase (import, plan, raise, autodiff, lower, LLVM, "
             "link) with its time even when stderr is not a terminal (also "
             "MEGAGRAPH_PROGRESS=1; MEGAGRAPH_PROGRESS=0 silences it)"),
    cl::cat(category));
cl::opt<bool> explainPlan(
    "explain",
    cl::desc("Print the top plans (predicted step time, peak memory per "
             "device) and why others were pruned"),
    cl::cat(category));
cl::opt<bool> debugIR(
    "debug-ir",
    cl::desc("On an error, also print the IR it concerns: the operation "
             "beside each diagnostic (the whole module when a pass fails "
             "on it) and the module after the failing pass. Without it, "
             "every error is one line"),
    cl::cat(category));
cl::opt<bool> listOps("list-onnx-ops",
                      cl::desc("Print the supported ONNX ops and exit"),
                      cl::cat(category));

/// llvm::cl's messages (each line "megagraph-compile: WHAT" or a
/// continuation, some ending in '!') as one line, "what; what".
std::string oneLine(StringRef text) {
  SmallVector<StringRef> lines;
  text.split(lines, '\n', -1, /*KeepEmpty=*/false);
  std::string joined;
  for (StringRef line : lines) {
    line = line.trim();
    line.consume_front("megagraph-compile: ");
    // Drop the pointers to --help ("...  Try: 'PATH --help'", "...: See:
    // PATH --help"): the one line ends in one.
    for (StringRef pointer : {"Try: ", "See: "})
      line = line.split(pointer).first.trim();
    line = line.rtrim(":").rtrim("!").rtrim(".").trim();
    if (line.empty())
      continue;
    std::string part = line.str();
    part[0] = llvm::toLower(part[0]);
    joined += (joined.empty() ? "" : "; ") + part;
  }
  return joined.empty() ? std::string("invalid command line") : joined;
}

/// Prints a command-line level error (no file involved).
int toolError(const Twine &message, int exitCode = 1) {
  errs() << "megagraph-compile: error: " << message << "\n";
  return exitCode;
}

/// True if @main of `module` has an argument whose gt.name is `name`.
bool hasInputNamed(ModuleOp module, StringRef name) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main)
    return false;
  for (unsigned i = 0; i < main.getNumArguments(); ++i)
    if (auto n = main.getArgAttrOfType<StringAttr>(
            i, megagraph::gt::kTensorNameAttr);
        n && n.getValue() == name)
      return true;
  return false;
}

/// The problem with the numeric and named training flags, or "": each is
/// checked before anything is read, so that a bad value is one line naming
/// the flag rather than a failure deep in the pipeline.
std::string checkTrainingFlags() {
  auto number = [](double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof(buffer), "%g", v);
    return std::string(buffer);
  };
  struct Range {
    const char *flag;
    double value;
    double lo, hi;
    bool loOpen, hiOpen;
  };
  constexpr double inf = std::numeric_limits<double>::infinity();
  const Range ranges[] = {
      {"lr", learningRate, 0, inf, true, true},
      {"weight-decay", weightDecay, 0, inf, false, true},
      {"momentum", momentum, 0, 1, false, true},
      {"dampening", dampening, 0, 1, false, false},
      {"beta1", beta1, 0, 1, false, true},
      {"beta2", beta2, 0, 1, false, true},
      {"eps", epsilon, 0, inf, true, true},
      {"min-lr", minLr, 0, inf, false, true},
      {"power", power, 0, inf, true, true},
      {"clip-grad-norm", clipGradNorm, 0, inf, false, true},
  };
  for (const Range &r : ranges) {
    bool ok = std::isfinite(r.value) &&
              (r.loOpen ? r.value > r.lo : r.value >= r.lo) &&
              (r.hiOpen ? r.value < r.hi : r.value <= r.hi);
    if (ok)
      continue;
    std::string range;
    if (r.hi == inf)
      range = std::string("a finite number ") + (r.loOpen ? "> " : ">= ") +
              number(r.lo);
    else
      range = std::string("in ") + (r.loOpen ? "(" : "[") + number(r.lo) +
              ", " + number(r.hi) + (r.hiOpen ? ")" : "]");
    return "--" + std::string(r.flag) + " must be " + range + ", got " +
           number(r.value);
  }
  for (auto [flag, value] : {std::pair{"warmup-steps", warmupSteps.getValue()},
                             std::pair{"total-steps", totalSteps.getValue()},
                             std::pair{"devices", devices.getValue()}})
    if (value < 0)
      return "--" + std::string(flag) + " must be >= 0, got " +
             std::to_string(value);
  if (!llvm::is_contained({"sgd", "adam", "adamw"}, StringRef(optimizerName)))
    return "--optimizer=" + optimizerName +
           " is not an optimizer; use sgd, adam or adamw";
  if (!llvm::is_contained({"constant", "linear", "cosine", "polynomial"},
                          StringRef(lrSchedule)))
    return "--lr-schedule=" + lrSchedule +
           " is not a schedule; use constant, linear, cosine or polynomial";
  if (lrSchedule != "constant" && totalSteps == 0)
    return "--lr-schedule=" + lrSchedule + " needs --total-steps > 0";
  if (totalSteps > 0 && warmupSteps > totalSteps)
    return "--warmup-steps (" + std::to_string(warmupSteps) +
           ") exceeds --total-steps (" + std::to_string(totalSteps) + ")";
  if (nesterov && (momentum <= 0 || dampening != 0))
    return "--nesterov needs --momentum > 0 and no --dampening";
  if (optLevel > 3)
    return "-O" + std::to_string(optLevel) +
           " is not an optimization level; use -O0 to -O3";
  return "";
}

/// The parsed --plan.
megagraph::ParallelPlan plan;

/// Parses --plan into `plan` and rejects the parts that are not implemented
/// yet (megagraph::checkPlanImplemented).
llvm::Error parsePlan(StringRef spec) {
  llvm::Expected<megagraph::ParallelPlan> parsed =
      megagraph::parseParallelPlan(spec);
  if (!parsed)
    return parsed.takeError();
  plan = *parsed;
  return megagraph::checkPlanImplemented(plan);
}

/// Pipeline stage boundaries without --plan stages=.
cl::opt<std::string> pipelineBalance(
    "pp-balance",
    cl::desc("Pipeline stage boundaries without --plan stages=: cost (the "
             "stage-splitting DP) or even (as many units per stage)"),
    cl::init("cost"), cl::cat(category));

/// Prints diagnostics as `FILE:LINE:COL: error: MESSAGE`, one line each.
/// Locations without a file (node names, unknown) use the input file at
/// 0:0, so every diagnostic of an ONNX import has the same form.
class OneLineDiagnosticHandler : public ScopedDiagnosticHandler {
public:
  OneLineDiagnosticHandler(MLIRContext *context, std::string fallbackFile)
      : ScopedDiagnosticHandler(context),
        fallbackFile(std::move(fallbackFile)) {
    setHandler([this](Diagnostic &diag) {
      print(diag);
      for (Diagnostic &note : diag.getNotes())
        print(note);
      return success();
    });
  }

private:
  void print(Diagnostic &diag) {
    std::string file = fallbackFile;
    unsigned line = 0, column = 0;
    diag.getLocation()->walk([&](Location loc) {
      if (auto flc = dyn_cast<FileLineColRange>(loc)) {
        file = flc.getFilename().str();
        line = flc.getStartLine();
        column = flc.getStartColumn();
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    const char *severity = "error";
    switch (diag.getSeverity()) {
    case mlir::DiagnosticSeverity::Note:
      severity = "note";
      break;
    case mlir::DiagnosticSeverity::Warning:
      severity = "warning";
      break;
    case mlir::DiagnosticSeverity::Remark:
      severity = "remark";
      break;
    case mlir::DiagnosticSeverity::Error:
      break;
    }
    errs() << file << ":" << line << ":" << column << ": " << severity << ": "
           << diag.str() << "\n";
  }

  std::string fallbackFile;
};

/// The phase lines of this run (Progress.h); set up in main.
megagraph::PhaseTimer *phases = nullptr;

/// --emit=llvm|obj|exe: lower, translate, and write or link.
int compileForCpu(ModuleOp module) {
  megagraph::CompileOptions options;
  options.referenceAttention = referenceAttention;
  options.precision = precision;
  options.optLevel = optLevel;
  options.runtimeLibDir = runtimeDir;
  FailureOr<megagraph::ModelSignature> signature =
      megagraph::getModelSignature(module);
  if (failed(signature))
    return 1;
  std::unique_ptr<megagraph::TargetBackend> backend;
  if (target == megagraph::Target::Cuda) {
    megagraph::CudaTargetOptions cuda;
    cuda.chip = cudaArch;
    cuda.multiDevice = signature->plan && signature->plan->devices() > 1;
    backend = megagraph::createCudaTargetBackend(cuda);
  } else {
    megagraph::CpuTargetOptions cpu;
    cpu.emulateGpuOnHost = cudaEmulate;
    backend = megagraph::createCpuTargetBackend(cpu);
  }
  if (failed(megagraph::lowerToLLVMDialect(module, *backend, options)))
    return 1;
  // An executable's object file holds its entry point too: the tables the
  // driver reads and main().
  if (emit == Emit::Exe &&
      failed(megagraph::addEntryTable(module, *signature,
                                      sys::path::stem(inputFile), *backend)))
    return 1;
  phases->done("lower");
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      megagraph::translateToLLVMIR(module, llvmContext, options);
  if (!llvmModule)
    return 1;
  phases->done("LLVM");
  std::string error;
  if (emit == Emit::Llvm) {
    std::unique_ptr<ToolOutputFile> output = openOutputFile(outputFile, &error);
    if (!output)
      return toolError(error);
    llvmModule->print(output->os(), nullptr);
    output->keep();
    return 0;
  }
  if (outputFile == "-")
    return toolError("--emit=obj and --emit=exe need an output file (-o)");
  if (emit == Emit::Obj) {
    if (failed(megagraph::emitObjectFile(*llvmModule, outputFile, error)))
      return toolError(error);
    phases->done("codegen");
    return 0;
  }
  // An executable: the object file + the runtime.
  SmallString<128> objPath;
  if (std::error_code ec =
          sys::fs::createTemporaryFile("megagraph-model", "o", objPath))
    return toolError("cannot create a temporary file: " + ec.message());
  FileRemover removeObj(objPath);
  if (failed(megagraph::emitObjectFile(*llvmModule, objPath, error)))
    return toolError(error);
  phases->done("codegen");
  if (failed(megagraph::linkExecutable(
          objPath, outputFile, megagraph::needsTrainingDriver(*signature),
          *backend, options, error)))
    return toolError(error);
  phases->done("link");
  return 0;
}

/// Prints what training will update: the parameter count and bytes, and
/// the float initializers imported as constants.
void reportParameters(ModuleOp module) {
  int64_t tensors = 0, values = 0, bytes = 0;
  for (auto global : module.getOps<ml_program::GlobalOp>()) {
    if (!global->hasAttr("gt.param"))
      continue;
    auto type = cast<ShapedType>(global.getType());
    ++tensors;
    values += type.getNumElements();
    bytes += type.getNumElements() * ((type.getElementTypeBitWidth() + 7) / 8);
  }
  llvm::errs() << "megagraph-compile: training " << tensors
               << " parameter tensors, " << values << " values ("
               << megagraph::formatBytes(static_cast<double>(bytes)) << ")";
  if (auto constants = module->getAttrOfType<ArrayAttr>("gt.onnx_constants")) {
    llvm::errs() << "; " << constants.size()
                 << " float initializers are constants (";
    for (auto [i, name] : llvm::enumerate(constants.getAsRange<StringAttr>())) {
      if (i == 4) {
        llvm::errs() << ", ...";
        break;
      }
      llvm::errs() << (i ? ", " : "") << name.getValue();
    }
    llvm::errs() << "; --trainable REGEX trains them)";
  }
  llvm::errs() << "\n";
  // Shared initializers: untied into one parameter per node, or kept tied.
  if (auto untied = module->getAttrOfType<ArrayAttr>("gt.onnx_untied")) {
    int64_t copies = 0;
    for (auto names : untied.getAsRange<ArrayAttr>())
      copies += names.size();
    llvm::errs() << "megagraph-compile: untied " << untied.size()
                 << " float initializers shared by several nodes into "
                 << copies << " parameters (";
    for (auto [i, names] : llvm::enumerate(untied.getAsRange<ArrayAttr>())) {
      if (i == 4) {
        llvm::errs() << "; ...";
        break;
      }
      llvm::errs() << (i ? "; " : "") << cast<StringAttr>(names[0]).getValue()
                   << " -> ";
      for (auto [j, name] : llvm::enumerate(names.getAsRange<StringAttr>()))
        llvm::errs() << (j ? ", " : "") << name.getValue();
    }
    llvm::errs() << "; --keep-tied-initializers trains each as one)\n";
  }
  if (auto tied = module->getAttrOfType<ArrayAttr>("gt.onnx_tied")) {
    llvm::errs() << "megagraph-compile: " << tied.size()
                 << " float initializers shared by several nodes are trained "
                    "tied (";
    for (auto [i, name] : llvm::enumerate(tied.getAsRange<StringAttr>())) {
      if (i == 4) {
        llvm::errs() << ", ...";
        break;
      }
      llvm::errs() << (i ? ", " : "") << name.getValue();
    }
    llvm::errs() << ")\n";
  }
}

int run(MLIRContext &context) {
  StringRef path = inputFile;
  std::string displayName = path == "-" ? "<stdin>" : path.str();
  bool isMlir = path.ends_with(".mlir");
  if (isMlir && !inputShapes.empty())
    return toolError("--input-shape applies to ONNX models only, not to '" +
                     path + "'");
  // Parse the flags before reading anything, so that a typo is reported
  // as such.
  megagraph::OnnxImportOptions options;
  options.fileName = displayName;
  for (const std::string &spec : inputShapes) {
    std::string error;
    if (failed(megagraph::parseInputShape(spec, options, error)))
      return toolError(error);
  }
  for (auto [flag, patterns, into] :
       {std::tuple{"freeze", &freezeInitializers, &options.freezePatterns},
        std::tuple{"trainable", &trainableInitializers,
                   &options.trainablePatterns}}) {
    if (isMlir && !patterns->empty())
      return toolError("--" + Twine(flag) +
                       " applies to ONNX models only, not to '" + path + "'");
    for (const std::string &pattern : *patterns) {
      std::string error;
      if (failed(megagraph::checkInitializerPattern(flag, pattern, error)))
        return toolError(error);
      into->push_back(pattern);
    }
  }

  if (isMlir && keepTiedInitializers)
    return toolError("--keep-tied-initializers applies to ONNX models only, "
                     "not to '" +
                     path + "'");
  options.keepTiedInitializers = keepTiedInitializers;

  std::string error;
  std::unique_ptr<MemoryBuffer> buffer = openInputFile(path, &error);
  if (!buffer)
    return toolError(error); // "cannot open input file 'X': REASON"

  OwningOpRef<ModuleOp> module;
  llvm::SourceMgr sourceMgr;
  std::unique_ptr<SourceMgrDiagnosticHandler> mlirDiagnostics;
  std::unique_ptr<OneLineDiagnosticHandler> onnxDiagnostics;
  if (isMlir) {
    sourceMgr.AddNewSourceBuffer(std::move(buffer), SMLoc());
    mlirDiagnostics =
        std::make_unique<SourceMgrDiagnosticHandler>(sourceMgr, &context);
    context.loadAllAvailableDialects();
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  } else {
    onnxDiagnostics =
        std::make_unique<OneLineDiagnosticHandler>(&context, displayName);
    if (path.ends_with(".onnxtxt") || path.ends_with(".onnxtext"))
      module = megagraph::importOnnxText(context, buffer->getBuffer(), options);
    else
      module =
          megagraph::importOnnxModel(context, buffer->getBuffer(), options);
  }
  if (!module)
    return 1;
  phases->done("import");
  // --input-shape edge_index=2xE for a model without that input (the
  // importer lets it through for one with adj_norm): gt-sparse-adjacency
  // replaces adj_norm by an edge list of E edges.
  int64_t sparseAdjacencyEdges = -1;
  if (auto it = options.inputShapes.find(megagraph::abi::kEdgeIndex);
      it != options.inputShapes.end() && !hasInputNamed(*module, it->first())) {
    ArrayRef<int64_t> shape = it->second;
    if (shape.size() != 2 || shape[0] != 2 || shape[1] < 1)
      return toolError(
          "--input-shape edge_index=" +
          llvm::join(llvm::map_range(
                         shape, [](int64_t d) { return std::to_string(d); }),
                     "x") +
          ": the edge list that replaces adj_norm is 2xE, E >= 1 the data "
          "set's directed edge count");
    sparseAdjacencyEdges = shape[1];
  }
  if (train || gradients)
    reportParameters(*module);

  // --devices / --explain / --emit=plan: the plan search (PlanChoice.cpp).
  if (train || emit == Emit::Plan) {
    megagraph::PlanRequest request;
    request.search = planSpec.empty();
    request.emitPlan = emit == Emit::Plan;
    request.explain = explainPlan;
    request.report = !planReport.empty();
    request.train = train;
    request.devices = devices;
    request.deviceMemory = deviceMemory;
    request.profile = profileName;
    request.optimizer = optimizerName;
    request.graphStats = graphStats;
    request.moa = searchMoa;
    request.sparseAdjacencyEdges = sparseAdjacencyEdges;
    request.implemented = [](const megagraph::ParallelPlan &p) {
      megagraph::ParallelPlan q = p;
      q.stages.clear(); // the compiler's gt-pipeline-split picks its own
      if (llvm::Error e = megagraph::checkPlanImplemented(q))
        return llvm::toString(std::move(e));
      return std::string();
    };
    if (!isMlir)
      request.reimport = [&](const megagraph::OnnxImportOptions &o) {
        return megagraph::importOnnxModel(context, buffer->getBuffer(), o);
      };
    std::string planJson;
    int rc = megagraph::choosePlan(context, module, options, request, plan,
                                   planJson);
    if (rc != 1 && (devices != 0 || explainPlan || emit == Emit::Plan))
      phases->done("plan");
    if (rc <= 0 && !planReport.empty()) {
      if (llvm::Error e = megagraph::writePlanReport(planReport, planJson))
        return toolError(llvm::toString(std::move(e)));
    }
    if (rc >= 0 && emit == Emit::Plan && rc == 0) {
      std::unique_ptr<ToolOutputFile> out = openOutputFile(outputFile, &error);
      if (!out)
        return toolError(error);
      out->os() << planJson;
      out->keep();
    }
    if (rc >= 0)
      return rc;
  }

  // Pipeline stages build their loss in gt-pipeline-train, which only knows
  // cross-entropy on the first output.
  if (train && (plan.pp > 1 || plan.microBatches > 1) &&
      (loss != "cross_entropy" || !lossOutput.empty()))
    return toolError(
        "--loss=" + loss +
        (lossOutput.empty() ? "" : " --loss-output=" + lossOutput) +
        " is not supported with pipeline parallelism or micro-batches (pp=" +
        std::to_string(plan.pp) + ", mb=" + std::to_string(plan.microBatches) +
        "); use a plan without pp and mb or the default loss");

  // The registered pipelines (megagraph/Pipelines/Pipelines.h), so
  // megagraph-opt --pass-pipeline='builtin.module(import-to-gt,train{...})'
  // reproduces this.
  // Two pass managers, so that raising and the training step are timed
  // apart; the second continues on the module the first produced.
  auto configured = [&](PassManager &pm) {
    if (failed(applyPassManagerCLOptions(pm)))
      return failure();
    applyDefaultTimingPassManagerCLOptions(pm);
    if (debugIR)
      pm.enableIRPrinting(
          /*shouldPrintBeforePass=*/nullptr,
          /*shouldPrintAfterPass=*/[](Pass *, Operation *) { return true; },
          /*printModuleScope=*/true, /*printAfterOnlyOnChange=*/false,
          /*printAfterOnlyOnFailure=*/true);
    return success();
  };
  if (emit != Emit::Mlir) {
    PassManager raise(&context);
    if (failed(configured(raise)))
      return 1;
    megagraph::ImportToGtPipelineOptions importToGt;
    importToGt.sparseAdjacencyEdges = sparseAdjacencyEdges;
    megagraph::buildImportToGtPassPipeline(raise, importToGt);
    if (failed(raise.run(*module)))
      return 1;
    phases->done("raise");
    PassManager pm(&context);
    if (failed(configured(pm)))
      return 1;
    if (train || gradients) {
      megagraph::TrainPipelineOptions step;
      step.gradients = gradients;
      if (train)
        step.plan = megagraph::toString(plan);
      step.loss = loss;
      step.lossOutput = lossOutput;
      step.optimizer = optimizerName;
      step.learningRate = learningRate;
      step.weightDecay = weightDecay;
      step.momentum = momentum;
      step.dampening = dampening;
      step.nesterov = nesterov;
      step.beta1 = beta1;
      step.beta2 = beta2;
      step.epsilon = epsilon;
      step.lrSchedule = lrSchedule;
      step.warmupSteps = warmupSteps;
      step.totalSteps = totalSteps;
      step.minLr = minLr;
      step.power = power;
      step.clipGradNorm = clipGradNorm;
      step.ppBalance = pipelineBalance;
      step.profile = profileName;
      megagraph::buildTrainPassPipeline(pm, step);
    }
    if (failed(pm.run(*module)))
      return 1;
    if (train || gradients)
      phases->done("autodiff");
  }

  if (emit == Emit::Llvm || emit == Emit::Obj || emit == Emit::Exe)
    return compileForCpu(*module);

  std::unique_ptr<ToolOutputFile> output = openOutputFile(outputFile, &error);
  if (!output)
    return toolError(error);
  module->print(output->os());
  output->os() << "\n";
  output->keep();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM init(argc, argv);
  // The CPU back end builds part of its pipeline from a textual pipeline.
  megagraph::registerAllPasses();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  registerDefaultTimingManagerCLOptions();
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "megagraph-compile " MEGAGRAPH_VERSION " (MegaGraph, LLVM/MLIR "
       << LLVM_VERSION_STRING << ")\n";
  });
  // --help lists this tool's options only; the hundreds of LLVM/MLIR ones
  // (backends, --mlir-print-ir-after-all, --mlir-timing, ...) still work and
  // are listed by --help-hidden.
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.second;
    StringRef name = entry.first;
    if (!llvm::is_contained(option->Categories, &category) && name != "help" &&
        name != "help-hidden" && name != "version" &&
        option->getOptionHiddenFlag() == cl::NotHidden)
      option->setHiddenFlag(cl::Hidden);
  }
  // Command-line errors are one line, `megagraph-compile: error: ...`,
  // whatever llvm::cl says: it writes one to three lines per problem, part
  // of them straight to stderr (an option's bad value), so stderr is
  // captured in a temporary file while the command line is parsed.
  std::string parseErrors;
  bool parsed;
  {
    raw_string_ostream parseErrorStream(parseErrors);
    SmallString<128> capturePath;
    int captureFd = -1, savedStderr = -1;
    if (!sys::fs::createTemporaryFile("megagraph-compile-args", "txt",
                                      captureFd, capturePath)) {
      // Unlinked at once: --help exits from inside the parser.
      sys::fs::remove(capturePath);
      errs().flush();
      savedStderr = ::dup(2);
      ::dup2(captureFd, 2);
    }
    parsed = cl::ParseCommandLineOptions(
        argc, argv,
        "MegaGraph: compile a Graph Transformer exported from PyTorch (ONNX) "
        "into a parallel training program\n\n"
        "  megagraph-compile model.onnx --emit=gt [--input-shape x=2x16x8]\n\n"
        "  MLIR debugging flags (--mlir-print-ir-after-all, --mlir-timing, "
        "...)\n"
        "  are accepted too; --help-hidden lists them. --debug-ir prints the\n"
        "  IR an error concerns.\n",
        &parseErrorStream);
    if (savedStderr >= 0) {
      errs().flush();
      ::dup2(savedStderr, 2);
      ::close(savedStderr);
      std::string captured;
      char chunk[4096];
      ::lseek(captureFd, 0, SEEK_SET);
      for (ssize_t n; (n = ::read(captureFd, chunk, sizeof(chunk))) > 0;)
        captured.append(chunk, n);
      ::close(captureFd);
      parseErrors = captured + "\n" + parseErrors;
    }
  }
  if (!parsed)
    return toolError(oneLine(parseErrors) + " (see --help)");
  // Warnings of a successful parse are passed on as they are.
  errs() << parseErrors.substr(parseErrors.find_first_not_of('\n') ==
                                       std::string::npos
                                   ? parseErrors.size()
                                   : 0);

  if (listOps) {
    for (StringRef op : megagraph::getSupportedOnnxOps())
      outs() << op << "\n";
    return 0;
  }
  if (inputFile.empty())
    return toolError(
        "no input file; usage: megagraph-compile "
        "model.onnx|model.onnxtxt|model.mlir --emit=mlir|gt|llvm|obj|exe "
        "[-o out] [--input-shape NAME=D0xD1x...] (see --help)");
  if (train && gradients)
    return toolError("--train and --gradients are exclusive");
  if (std::string problem = checkTrainingFlags(); !problem.empty())
    return toolError(problem);
  if (precision != "fp32" && precision != "bf16")
    return toolError("--precision=" + precision +
                     " is not a precision; use "
                     "fp32 or bf16");
  if (!planSpec.empty()) {
    if (!train)
      return toolError("--plan applies to training steps; add --train");
    if (llvm::Error error = parsePlan(planSpec))
      return toolError(llvm::toString(std::move(error)));
    // The accelerator pipeline is the CPU runtime's thread groups.
    if (plan.moa && (target == megagraph::Target::Cuda || precision != "fp32"))
      return toolError("--plan " + megagraph::toString(plan) +
                       ": moa=1 is built for --target cpu in fp32 only");
  }
  if (!llvm::is_contained(
          {"cross_entropy", "nll", "mse", "l1", "bce_with_logits"},
          StringRef(loss)))
    return toolError("--loss=" + loss +
                     " is not a loss; use cross_entropy, nll, mse, l1 or "
                     "bce_with_logits");
  if (!train && !gradients &&
      (loss.getNumOccurrences() || lossOutput.getNumOccurrences()))
    return toolError("--loss and --loss-output apply to --train and "
                     "--gradients");
  if (!train && !planReport.empty())
    return toolError("--plan-report shows the plan of a training step; add "
                     "--train");
  if (!train && (emit == Emit::Plan || devices != 0 || explainPlan))
    return toolError("--emit=plan, --devices and --explain choose a plan for "
                     "training steps; add --train");

  DialectRegistry registry;
  megagraph::registerAllDialects(registry);
  MLIRContext context(registry);
  // MLIR attaches the operation to each diagnostic ("see current
  // operation: ..."), for a failing pass the whole module: only with
  // --debug-ir (or an explicit --mlir-print-op-on-diagnostic).
  if (!debugIR && !cl::getRegisteredOptions()["mlir-print-op-on-diagnostic"]
                       ->getNumOccurrences())
    context.printOpOnDiagnostic(false);
  if (debugIR) {
    context.printOpOnDiagnostic(true);
    // IR printing after a failing pass needs a single-threaded context.
    context.disableMultithreading();
  }
  megagraph::PhaseTimer timer(megagraph::progressEnabled(progressFlag));
  phases = &timer;
  return run(context);
}
