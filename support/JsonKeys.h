// The keys of each open object of a JSON text, as nlohmann's parser
// callback reports them: nlohmann keeps the last value of a key given twice,
// which an untrusted file must not get to choose silently. Each parser of
// untrusted JSON feeds its callback's events here and names the key it
// returns in its own error.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace spyre {

class JsonDuplicateKeys {
public:
  /// Takes one parser event; returns the key when the object it opens
  /// already had it.
  std::optional<std::string> see(nlohmann::json::parse_event_t event,
                                 const nlohmann::json &parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start)
      open_.emplace_back();
    else if (event == Event::object_end && !open_.empty())
      open_.pop_back();
    else if (event == Event::key && !open_.empty() &&
             !open_.back().insert(parsed.get<std::string>()).second)
      return parsed.get<std::string>();
    return std::nullopt;
  }

private:
  std::vector<std::set<std::string>> open_;
};

} // namespace spyre
