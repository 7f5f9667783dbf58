// Fuzz target `serve_trace`: the request-trace reader of `spyre serve`
// (serve/Trace.h) on arbitrary text. A trace it accepts has at least one
// request, arrivals in range and never decreasing, token counts within
// their limits, and reads back as the same requests from the CSV it is
// written as (arrivals to the microsecond the CSV keeps).
#include "FuzzTarget.h"

#include "serve/Trace.h"
#include "support/Diagnostic.h"

#include <cmath>
#include <vector>

using namespace spyre;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string_view text = fuzz::asText(data, size);
  std::vector<serve::Request> trace;
  try {
    trace = serve::parseTrace(text, "fuzz.csv");
  } catch (const UserError &) {
    return 0;
  }
  SPYRE_ASSERT(!trace.empty(), "an accepted trace has a request");
  double last = 0;
  int64_t outputs = 0;
  for (const serve::Request &r : trace) {
    outputs += r.outputTokens;
    SPYRE_ASSERT(r.arrivalS >= last && r.arrivalS <= serve::kMaxArrivalS,
                 "arrivals in range and in order");
    SPYRE_ASSERT(r.promptTokens >= 1 &&
                     r.promptTokens <= serve::kMaxRequestTokens &&
                     r.outputTokens >= 1 &&
                     r.outputTokens <= serve::kMaxRequestTokens,
                 "token counts within their limits");
    last = r.arrivalS;
  }
  SPYRE_ASSERT(outputs <= serve::kMaxTraceOutputTokens,
               "output tokens within the trace's total");
  const std::vector<serve::Request> back =
      serve::parseTrace(serve::traceCsv(trace), "written.csv");
  SPYRE_ASSERT(back.size() == trace.size(), "a written trace reads back");
  for (size_t i = 0; i < back.size(); ++i)
    SPYRE_ASSERT(std::abs(back[i].arrivalS - trace[i].arrivalS) <= 1e-6 &&
                     back[i].promptTokens == trace[i].promptTokens &&
                     back[i].outputTokens == trace[i].outputTokens,
                 "a written trace reads back as the same requests");
  return 0;
}
