// vecsync's own binding over usearch's dense HNSW index (the headers of the `usearch` npm package,
// so files are the same format its stock JS binding reads and writes).
//
// Why it exists: the stock binding adds synchronously, so a backfill's graph insertions held the
// event loop and every query waited behind them (docs/architecture.md, "The graph off the event
// loop"). Here `addAsync` runs the insertions as N-API async work on a libuv thread.
//
// Concurrency rules (usearch: inserts and searches may run together, each on its own thread
// context; nothing may run during a reserve, save or load):
// - `mutate_` is held by every call that changes the graph or its capacity, and by saves: add,
//   addAsync's work, reserve, save, saveAsync's work, load. A synchronous call made while async
//   work runs waits for it.
// - Capacity is reserved on the JS thread, under `mutate_`, before async work is queued, so the
//   work itself never reallocates what a search reads.
// - Searches (and gathers) take no lock: they run on the JS thread (or threads it waits for), beside at most
//   one add and one `searchAsync`, on thread contexts of their own: the index keeps `contexts_` of
//   them, three times the threads a call may use.
// - `searchAsync` runs off the JS thread, so it holds `grow_` shared while it runs, and every
//   reserve (an add that must grow, load, saveAsync's) takes it exclusively first: the JS thread
//   waits for a search in flight before it moves what the search reads.
// - Async work holds references to the index object and to its input arrays until it ends.
#include <pthread.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#define NAPI_CPP_EXCEPTIONS
#include <napi.h>

#include <usearch/index_dense.hpp>

using namespace unum::usearch;
using dense_t = index_dense_t;

namespace {

std::size_t to_size(Napi::Value v) { return static_cast<std::size_t>(v.As<Napi::Number>().DoubleValue()); }

/**
 * usearch's dense index keeps its graph (`index_gt`) private and offers neighbour lists by key
 * only: a hash lookup under a shared lock for each. Counting back links that way cost 60-75 % of
 * the insertion itself (60k × 768); by slot, a list is one read of its node. An explicit template
 * instantiation may name a private member ([temp.spec.general]), which is how the pointer to the
 * graph is read here. Built against the installed package's headers; a layout change fails to
 * compile, not at run time.
 */
using graph_t = index_gt<dense_t::distance_t, dense_t::vector_key_t, dense_t::compressed_slot_t, dense_t::dynamic_allocator_t, dense_t::tape_allocator_t>;
struct GraphOf {
    using type = graph_t* dense_t::*;
    friend type graph_of(GraphOf);
};
template <typename tag_at, typename tag_at::type member_ak> struct Expose {
    friend typename tag_at::type graph_of(tag_at) { return member_ak; }
};
template struct Expose<GraphOf, &dense_t::typed_>;

/** The first error of a parallel loop; usearch's messages are static strings. */
struct FirstError {
    std::atomic<bool> failed{false};
    char const* message = nullptr;
    void set(char const* m) {
        if (!failed.exchange(true)) message = m ? m : "unknown usearch error";
    }
};

class Graph : public Napi::ObjectWrap<Graph> {
  public:
    static Napi::Object Init(Napi::Env env, Napi::Object exports);
    explicit Graph(Napi::CallbackInfo const& info);

    /** Runs `one(i)` for i < n, on `threads` threads. */
    template <typename one_at> static void for_each(std::size_t n, std::size_t threads, one_at&& one) {
        if (threads <= 1 || n < 2) {
            for (std::size_t i = 0; i < n; i++) one(i);
        } else {
            executor_default_t executor{threads};
            executor.fixed(n, [&](std::size_t, std::size_t i) { one(i); });
        }
    }

    /**
     * Adds rows whose keys are not present yet. Caller holds `mutate_`. Empty string: done.
     * `linked` (optional, n bytes): for each row this call added, once all are in, how many of its
     * base-level neighbours list it back (`back_links`); 255 for a row it did not add.
     */
    template <typename scalar_at>
    std::string add_rows(std::uint64_t const* keys, scalar_at const* vectors, std::size_t n, std::size_t threads, std::uint8_t* linked) {
        FirstError error;
        std::size_t const dims = native_->dimensions();
        std::vector<std::uint64_t> slots(linked ? n : 0, not_added);
        for_each(n, threads, [&](std::size_t i) {
            if (error.failed.load()) return;
            auto key = static_cast<default_key_t>(keys[i]);
            if (native_->contains(key)) return; // a replay may offer a row twice
            auto result = native_->add(key, vectors + i * dims);
            if (!result) return error.set(result.error.release());
            if (linked) slots[i] = result.slot;
        });
        if (error.failed) return std::string(error.message);
        if (linked)
            for_each(n, threads, [&](std::size_t i) {
                linked[i] = slots[i] == not_added ? 255 : back_links(slots[i]);
            });
        return std::string();
    }

    /**
     * How many of the row's base-level neighbours hold a link back to it (capped at 254). With
     * none, no search can reach the row there: HNSW's pruning of those neighbours' lists cut it
     * off (a stray, src/drivers/vector-store/strays.ts). With several, a search for its own vector
     * nearly always finds it (src/drivers/vector-store/back-links.ts). ~33 list reads by slot,
     * against a search's hundreds of distances. Caller holds `mutate_` (the lists do not change
     * meanwhile).
     */
    std::uint8_t back_links(std::uint64_t own) const {
        graph_t const& graph = *(native_.get()->*graph_of(GraphOf{}));
        auto const slot = static_cast<dense_t::compressed_slot_t>(own);
        std::size_t count = 0;
        auto outs = graph.neighbors(slot, 0);
        for (auto it = outs.begin(); it != outs.end() && count < 254; ++it) {
            auto theirs = graph.neighbors(it.slot(), 0);
            for (auto jt = theirs.begin(); jt != theirs.end(); ++jt)
                if (jt.slot() == slot) {
                    count++;
                    break;
                }
        }
        return static_cast<std::uint8_t>(count);
    }
    static constexpr std::uint64_t not_added = std::numeric_limits<std::uint64_t>::max();

    /** `add_rows` over vectors of either accepted type. Caller holds `mutate_`. */
    std::string add_any(std::uint64_t const* keys, void const* vectors, napi_typedarray_type type, std::size_t n, std::size_t threads,
                        std::uint8_t* linked = nullptr) {
        return type == napi_float32_array ? add_rows(keys, static_cast<float const*>(vectors), n, threads, linked)
                                          : add_rows(keys, static_cast<std::int8_t const*>(vectors), n, threads, linked);
    }

    /** Room for `more` rows beyond the present ones, on `contexts_` thread contexts. Caller holds `mutate_`. */
    /** Caller holds `mutate_`. Counts the rows of async work queued and not yet inserted too. */
    bool reserve_for(std::size_t more) {
        std::size_t const want = native_->size() + queued_ + more;
        if (want < native_->capacity()) return true;
        return try_reserve(index_limits_t(ceil2(want), contexts_));
    }

    std::unique_ptr<dense_t> native_;
    std::mutex mutate_;
    /** Shared by `searchAsync`'s work while it runs, exclusive around a reserve (see the header). */
    pthread_rwlock_t grow_ = PTHREAD_RWLOCK_INITIALIZER;
    /** `try_reserve` once no `searchAsync` runs. Caller holds `mutate_`, on the JS thread. */
    bool try_reserve(index_limits_t limits) {
        pthread_rwlock_wrlock(&grow_);
        bool const done = native_->try_reserve(limits);
        pthread_rwlock_unlock(&grow_);
        return done;
    }
    /**
     * Rows of async work queued and not yet inserted, under `mutate_`. Without them a synchronous
     * add made between an addAsync and the start of its work took the capacity reserved for it,
     * and the work failed ("Reserve capacity ahead of insertions!"): seen by `bench faults
     * --compact` as a restart that died.
     */
    std::size_t queued_ = 0;
    std::size_t contexts_ = 2;
    /**
     * The inserting threads' nice value. Measured by `bench pipeline` (40k × 256, 2 cores, runs
     * alternating): at the loop's own priority a query waited 13-16 ms (p50) during a fill, at
     * 10 9-10 ms, at 19 7-9 ms, with the fill's rate the same. 10 and not 19: on a host whose
     * other processes keep the cores busy, 19 would leave a backfill next to nothing.
     */
    int nice_ = 10;

    /**
     * One search run beside the JS thread (searchBegin/searchEnd), on a helper thread the graph
     * starts at its first such search and stops when it is collected. A hybrid query ranks its
     * keyword side on the JS thread while its vector side's graph search runs here: ~0.3-0.8 ms
     * each at 100k rows, so the query costs about the longer of the two, not their sum.
     */
    struct Beside {
        std::mutex m;
        /**
         * pthread's condition, not std::condition_variable: built with g++ 12's headers, its wait
         * needs GLIBCXX_3.4.30, above the floor every build is held to (native/README.md).
         */
        pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
        ~Beside() { pthread_cond_destroy(&cv); }
        /** Waits, `lock` held on `m`, until `done()`. */
        template <typename done_at> void wait(std::unique_lock<std::mutex>& lock, done_at&& done) {
            while (!done()) pthread_cond_wait(&cv, lock.mutex()->native_handle());
        }
        void notify() { pthread_cond_broadcast(&cv); }
        std::function<void()> job;
        bool busy = false, stop = false;
        /** Between a searchBegin and its searchEnd (JS thread only). */
        bool begun = false;
        std::thread helper;
        std::vector<std::uint64_t> keys;
        std::vector<float> distances;
        std::size_t count = 0;
        std::string error;
        Napi::Reference<Napi::TypedArray> query;
    };
    std::unique_ptr<Beside> beside_;
    void run_beside() {
        std::unique_lock<std::mutex> lock(beside_->m);
        for (;;) {
            beside_->wait(lock, [&] { return beside_->stop || beside_->job; });
            if (beside_->stop) return;
            auto job = std::move(beside_->job);
            beside_->job = nullptr;
            lock.unlock();
            job();
            lock.lock();
            beside_->busy = false;
            beside_->notify();
        }
    }
    ~Graph() {
        pthread_rwlock_destroy(&grow_);
        if (!beside_) return;
        {
            std::lock_guard<std::mutex> lock(beside_->m);
            beside_->stop = true;
        }
        beside_->notify();
        beside_->helper.join();
    }

    /** The arguments of add and addAsync: (keys, vectors, threads), checked. */
    struct AddInput {
        Napi::BigUint64Array keys;
        Napi::TypedArray vectors;
        void const* data;
        std::size_t n, threads;
        /** The optional 4th argument: a Uint8Array of n, for `add_rows`' `linked`. */
        Napi::Uint8Array linked;
    };
    AddInput add_input(Napi::CallbackInfo const& info) {
        Napi::Env env = info.Env();
        auto keys = info[0].As<Napi::BigUint64Array>();
        auto vectors = info[1].As<Napi::TypedArray>();
        std::size_t n = keys.ElementLength();
        if (vectors.ElementLength() != n * native_->dimensions()) throw Napi::RangeError::New(env, "vectors must be keys × dimensions");
        if (vectors.TypedArrayType() != napi_float32_array && vectors.TypedArrayType() != napi_int8_array)
            throw Napi::TypeError::New(env, "vectors must be a Float32Array or an Int8Array");
        void const* data = static_cast<std::uint8_t const*>(vectors.ArrayBuffer().Data()) + vectors.ByteOffset();
        Napi::Uint8Array linked;
        if (info.Length() > 3 && !info[3].IsUndefined()) {
            if (!info[3].IsTypedArray() || info[3].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array)
                throw Napi::TypeError::New(env, "linked must be a Uint8Array");
            linked = info[3].As<Napi::Uint8Array>();
            if (linked.ElementLength() < n) throw Napi::RangeError::New(env, "linked must hold keys.length bytes");
        }
        return {keys, vectors, data, n, std::min(to_size(info[2]), contexts_ / 3), linked};
    }

    /** The arguments of search and searchAsync: (queries, k, threads), checked. */
    struct SearchInput {
        Napi::TypedArray queries;
        void const* data;
        napi_typedarray_type type;
        std::size_t n, wanted, threads;
    };
    SearchInput search_input(Napi::CallbackInfo const& info) {
        Napi::Env env = info.Env();
        auto queries = info[0].As<Napi::TypedArray>();
        std::size_t wanted = to_size(info[1]);
        std::size_t dims = native_->dimensions();
        if (wanted == 0 || queries.ElementLength() % dims != 0) throw Napi::RangeError::New(env, "bad queries or k");
        auto type = queries.TypedArrayType();
        if (type != napi_float32_array && type != napi_int8_array) throw Napi::TypeError::New(env, "queries must be a Float32Array or an Int8Array");
        void const* data = static_cast<std::uint8_t const*>(queries.ArrayBuffer().Data()) + queries.ByteOffset();
        return {queries, data, type, queries.ElementLength() / dims, wanted, std::min(to_size(info[2]), contexts_ / 3)};
    }

    /** Searches `in`'s queries into the output arrays (n·wanted, n·wanted, n). Empty string: done. */
    std::string search_rows(SearchInput const& in, std::uint64_t* keys, float* distances, std::uint32_t* counts) {
        std::size_t const dims = native_->dimensions(), wanted = in.wanted;
        std::fill_n(distances, in.n * wanted, std::numeric_limits<float>::infinity());
        FirstError error;
        auto run = [&](auto const* vectors) {
            for_each(in.n, in.threads, [&](std::size_t q) {
                if (error.failed.load()) return;
                auto result = native_->search(vectors + q * dims, wanted);
                if (!result) return error.set(result.error.release());
                counts[q] = static_cast<std::uint32_t>(result.dump_to(keys + q * wanted, distances + q * wanted));
            });
        };
        if (in.type == napi_float32_array)
            run(static_cast<float const*>(in.data));
        else
            run(static_cast<std::int8_t const*>(in.data));
        return error.failed ? std::string(error.message) : std::string();
    }

    static Napi::Array search_answer(Napi::Env env, Napi::Value keys, Napi::Value distances, Napi::Value counts) {
        Napi::Array out = Napi::Array::New(env, 3);
        out.Set(0u, keys);
        out.Set(1u, distances);
        out.Set(2u, counts);
        return out;
    }

  private:
    Napi::Value Dimensions(Napi::CallbackInfo const& info) { return Napi::Number::New(info.Env(), double(native_->dimensions())); }
    Napi::Value Size(Napi::CallbackInfo const& info) { return Napi::Number::New(info.Env(), double(native_->size())); }
    Napi::Value Capacity(Napi::CallbackInfo const& info) { return Napi::Number::New(info.Env(), double(native_->capacity())); }
    void Add(Napi::CallbackInfo const& info);
    Napi::Value AddAsync(Napi::CallbackInfo const& info);
    Napi::Value Search(Napi::CallbackInfo const& info);
    Napi::Value SearchAsync(Napi::CallbackInfo const& info);
    void SearchBegin(Napi::CallbackInfo const& info);
    Napi::Value SearchEnd(Napi::CallbackInfo const& info);
    Napi::Value Contains(Napi::CallbackInfo const& info);
    Napi::Value Gather(Napi::CallbackInfo const& info);
    Napi::Value Get(Napi::CallbackInfo const& info);
    void Save(Napi::CallbackInfo const& info);
    Napi::Value SaveAsync(Napi::CallbackInfo const& info);
    void Load(Napi::CallbackInfo const& info);
};

class AddWork : public Napi::AsyncWorker {
  public:
    AddWork(Napi::Env env, Graph* graph, Napi::Object self, Graph::AddInput const& in)
        : Napi::AsyncWorker(env, "vecsync.graph.add"), deferred_(Napi::Promise::Deferred::New(env)), graph_(graph),
          keys_(in.keys.Data()), n_(in.n), type_(in.vectors.TypedArrayType()), data_(in.data), threads_(in.threads) {
        self_ = Napi::Persistent(self);
        keys_ref_ = Napi::Persistent(static_cast<Napi::Object>(in.keys));
        vectors_ref_ = Napi::Persistent(static_cast<Napi::Object>(in.vectors));
        if (!in.linked.IsEmpty()) {
            linked_ = static_cast<std::uint8_t*>(in.linked.ArrayBuffer().Data()) + in.linked.ByteOffset();
            linked_ref_ = Napi::Persistent(static_cast<Napi::Object>(in.linked));
        }
    }

    Napi::Promise promise() const { return deferred_.Promise(); }

    // On a thread of its own, at a lower priority (the threads usearch starts from it inherit it):
    // on a machine with few cores the insertions would otherwise take the CPU from the event loop,
    // and every search and write would wait for them. The pool thread only waits meanwhile.
    void Execute() override {
        std::string error;
        std::thread inserter([&] {
            setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), graph_->nice_);
            std::lock_guard<std::mutex> lock(graph_->mutate_);
            error = graph_->add_any(keys_, data_, type_, n_, threads_, linked_);
            graph_->queued_ -= n_;
        });
        inserter.join();
        if (!error.empty()) SetError(error);
    }
    void OnOK() override { deferred_.Resolve(Env().Undefined()); }
    void OnError(Napi::Error const& error) override { deferred_.Reject(error.Value()); }

  private:
    Napi::Promise::Deferred deferred_;
    Graph* graph_;
    Napi::ObjectReference self_, keys_ref_, vectors_ref_, linked_ref_;
    std::uint64_t const* keys_;
    std::uint8_t* linked_ = nullptr;
    std::size_t n_;
    napi_typedarray_type type_;
    void const* data_;
    std::size_t threads_;
};

// saveAsync(path): Promise<number>, the count of vectors in the file. Searches may run meanwhile.
class SaveWork : public Napi::AsyncWorker {
  public:
    SaveWork(Napi::Env env, Graph* graph, Napi::Object self, std::string path)
        : Napi::AsyncWorker(env, "vecsync.graph.save"), deferred_(Napi::Promise::Deferred::New(env)), graph_(graph), path_(std::move(path)) {
        self_ = Napi::Persistent(self);
    }

    Napi::Promise promise() const { return deferred_.Promise(); }

    void Execute() override {
        std::lock_guard<std::mutex> lock(graph_->mutate_);
        auto result = graph_->native_->save(path_.c_str());
        if (!result) return SetError(result.error.release());
        saved_ = graph_->native_->size();
    }
    void OnOK() override { deferred_.Resolve(Napi::Number::New(Env(), double(saved_))); }
    void OnError(Napi::Error const& error) override { deferred_.Reject(error.Value()); }

  private:
    Napi::Promise::Deferred deferred_;
    Graph* graph_;
    Napi::ObjectReference self_;
    std::string path_;
    std::size_t saved_ = 0;
};

// searchAsync's work, holding `grow_` shared so no reserve moves what it reads. In the background
// (a check of rows already stray-listed, so found meanwhile) on a thread of its own at the
// insertions' nice value: on 2 cores at the JS thread's priority it takes the CPU the loop needs
// under a change stream. Otherwise at the JS thread's priority: a sweep is how a row cut off by
// later inserts becomes findable, and at nice 10 beside a fill's insertions a sweep after a
// restart fell behind the fill (the fault harness found such rows once the table read synced).
class SearchWork : public Napi::AsyncWorker {
  public:
    SearchWork(Napi::Env env, Graph* graph, Napi::Object self, Graph::SearchInput const& in, bool background)
        : Napi::AsyncWorker(env, "vecsync.graph.search"), deferred_(Napi::Promise::Deferred::New(env)), graph_(graph), in_(in),
          background_(background), keys_(in.n * in.wanted), distances_(in.n * in.wanted), counts_(in.n) {
        self_ = Napi::Persistent(self);
        queries_ref_ = Napi::Persistent(static_cast<Napi::Object>(in.queries));
    }

    Napi::Promise promise() const { return deferred_.Promise(); }

    void Execute() override {
        std::string error;
        auto search = [&] {
            pthread_rwlock_rdlock(&graph_->grow_);
            error = graph_->search_rows(in_, keys_.data(), distances_.data(), counts_.data());
            pthread_rwlock_unlock(&graph_->grow_);
        };
        if (background_) {
            std::thread searcher([&] {
                setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)), graph_->nice_);
                search();
            });
            searcher.join();
        } else
            search();
        if (!error.empty()) SetError(error);
    }
    void OnOK() override {
        Napi::Env env = Env();
        auto keys = Napi::BigUint64Array::New(env, keys_.size());
        auto distances = Napi::Float32Array::New(env, distances_.size());
        auto counts = Napi::Uint32Array::New(env, counts_.size());
        std::copy(keys_.begin(), keys_.end(), keys.Data());
        std::copy(distances_.begin(), distances_.end(), distances.Data());
        std::copy(counts_.begin(), counts_.end(), counts.Data());
        deferred_.Resolve(Graph::search_answer(env, keys, distances, counts));
    }
    void OnError(Napi::Error const& error) override { deferred_.Reject(error.Value()); }

  private:
    Napi::Promise::Deferred deferred_;
    Graph* graph_;
    Napi::ObjectReference self_, queries_ref_;
    Graph::SearchInput in_;
    bool background_;
    std::vector<std::uint64_t> keys_;
    std::vector<float> distances_;
    std::vector<std::uint32_t> counts_;
};

Napi::Object Graph::Init(Napi::Env env, Napi::Object exports) {
    Napi::Function func = DefineClass(env, "Graph",
                                      {
                                          InstanceMethod("dimensions", &Graph::Dimensions),
                                          InstanceMethod("size", &Graph::Size),
                                          InstanceMethod("capacity", &Graph::Capacity),
                                          InstanceMethod("add", &Graph::Add),
                                          InstanceMethod("addAsync", &Graph::AddAsync),
                                          InstanceMethod("search", &Graph::Search),
                                          InstanceMethod("searchAsync", &Graph::SearchAsync),
                                          InstanceMethod("searchBegin", &Graph::SearchBegin),
                                          InstanceMethod("searchEnd", &Graph::SearchEnd),
                                          InstanceMethod("contains", &Graph::Contains),
                                          InstanceMethod("get", &Graph::Get),
                                          InstanceMethod("gather", &Graph::Gather),
                                          InstanceMethod("save", &Graph::Save),
                                          InstanceMethod("saveAsync", &Graph::SaveAsync),
                                          InstanceMethod("load", &Graph::Load),
                                      });
    exports.Set("Graph", func);
    exports.Set("usearchVersion", Napi::String::New(env, std::to_string(USEARCH_VERSION_MAJOR) + "." +
                                                             std::to_string(USEARCH_VERSION_MINOR) + "." +
                                                             std::to_string(USEARCH_VERSION_PATCH)));
    return exports;
}

// new Graph(dimensions, metric, scalar, connectivity, expansionAdd, expansionSearch, contexts)
Graph::Graph(Napi::CallbackInfo const& info) : Napi::ObjectWrap<Graph>(info) {
    Napi::Env env = info.Env();
    if (info.Length() != 7) throw Napi::TypeError::New(env, "Graph expects 7 arguments");
    std::size_t dims = to_size(info[0]);
    metric_kind_t metric_kind = metric_from_name(info[1].As<Napi::String>().Utf8Value().c_str());
    scalar_kind_t scalar = scalar_kind_from_name(info[2].As<Napi::String>().Utf8Value().c_str());
    contexts_ = std::max<std::size_t>(2, to_size(info[6]));
    metric_punned_t metric(dims, metric_kind, scalar);
    if (metric.missing()) throw Napi::TypeError::New(env, "unsupported metric or scalar kind");
    index_dense_config_t config(to_size(info[3]), to_size(info[4]), to_size(info[5]));
    config.multi = false;
    auto made = dense_t::make(metric, config);
    if (!made) throw Napi::Error::New(env, made.error.release());
    native_.reset(new dense_t(std::move(made.index)));
    if (!native_->try_reserve(index_limits_t(16, contexts_))) throw Napi::Error::New(env, "out of memory");
}

// add(keys: BigUint64Array, vectors: Float32Array | Int8Array, threads, linked?: Uint8Array); `linked`
// as addAsync's.
void Graph::Add(Napi::CallbackInfo const& info) {
    AddInput in = add_input(info);
    std::lock_guard<std::mutex> lock(mutate_);
    if (!reserve_for(in.n)) throw Napi::Error::New(info.Env(), "failed to reserve memory");
    std::uint8_t* linked = in.linked.IsEmpty() ? nullptr : static_cast<std::uint8_t*>(in.linked.ArrayBuffer().Data()) + in.linked.ByteOffset();
    std::string error = add_any(in.keys.Data(), in.data, in.vectors.TypedArrayType(), in.n, in.threads, linked);
    if (!error.empty()) throw Napi::Error::New(info.Env(), error);
}

// addAsync(keys, vectors, threads, linked?: Uint8Array): Promise<void>. The arrays must not change
// until it settles; `linked`, given, is filled as `add_rows` says.
Napi::Value Graph::AddAsync(Napi::CallbackInfo const& info) {
    AddInput in = add_input(info);
    {
        // Waits for earlier work: a reserve must not overlap an insertion.
        std::lock_guard<std::mutex> lock(mutate_);
        if (!reserve_for(in.n)) throw Napi::Error::New(info.Env(), "failed to reserve memory");
        queued_ += in.n;
    }
    auto* work = new AddWork(info.Env(), this, info.This().As<Napi::Object>(), in);
    Napi::Promise promise = work->promise();
    work->Queue();
    return promise;
}

// search(queries, k, threads): [keys BigUint64Array(n·k), distances Float32Array(n·k), counts Uint32Array(n)];
// slots past a query's count hold distance +Infinity.
Napi::Value Graph::Search(Napi::CallbackInfo const& info) {
    Napi::Env env = info.Env();
    SearchInput in = search_input(info);
    auto keys = Napi::BigUint64Array::New(env, in.n * in.wanted);
    auto distances = Napi::Float32Array::New(env, in.n * in.wanted);
    auto counts = Napi::Uint32Array::New(env, in.n);
    std::string error = search_rows(in, keys.Data(), distances.Data(), counts.Data());
    if (!error.empty()) throw Napi::Error::New(env, error);
    return search_answer(env, keys, distances, counts);
}

// searchAsync(queries, k, threads, background): Promise of what `search` answers, the search run
// off the JS thread (SearchWork says at which priority). `queries` must not change until it settles.
Napi::Value Graph::SearchAsync(Napi::CallbackInfo const& info) {
    SearchInput in = search_input(info);
    bool background = info.Length() > 3 && info[3].ToBoolean().Value();
    auto* work = new SearchWork(info.Env(), this, info.This().As<Napi::Object>(), in, background);
    Napi::Promise promise = work->promise();
    work->Queue();
    return promise;
}

// searchBegin(query, k): starts one query's search (as `search` on one thread) on the graph's
// helper thread and returns at once; searchEnd() waits for it and answers as `search` does. One at
// a time. The caller makes no other call on this graph in between: a reserve (add, load) must not
// move what the search reads, and the query array must not change.
void Graph::SearchBegin(Napi::CallbackInfo const& info) {
    Napi::Env env = info.Env();
    auto query = info[0].As<Napi::TypedArray>();
    std::size_t wanted = to_size(info[1]);
    std::size_t dims = native_->dimensions();
    if (wanted == 0 || query.ElementLength() != dims) throw Napi::RangeError::New(env, "bad query or k");
    auto type = query.TypedArrayType();
    if (type != napi_float32_array && type != napi_int8_array) throw Napi::TypeError::New(env, "query must be a Float32Array or an Int8Array");
    if (!beside_) {
        beside_.reset(new Beside());
        beside_->helper = std::thread([this] { run_beside(); });
    }
    Beside& b = *beside_;
    std::lock_guard<std::mutex> lock(b.m);
    if (b.begun) throw Napi::Error::New(env, "a search beside is already under way");
    b.keys.assign(wanted, 0);
    b.distances.assign(wanted, std::numeric_limits<float>::infinity());
    b.count = 0;
    b.error.clear();
    b.query = Napi::Persistent(query);
    void const* data = static_cast<std::uint8_t const*>(query.ArrayBuffer().Data()) + query.ByteOffset();
    b.job = [this, data, type, wanted] {
        Beside& b = *beside_;
        auto result = type == napi_float32_array ? native_->search(static_cast<float const*>(data), wanted)
                                                 : native_->search(static_cast<std::int8_t const*>(data), wanted);
        if (!result) b.error = result.error.release();
        else b.count = result.dump_to(b.keys.data(), b.distances.data());
    };
    b.busy = b.begun = true;
    b.notify();
}

Napi::Value Graph::SearchEnd(Napi::CallbackInfo const& info) {
    Napi::Env env = info.Env();
    if (!beside_ || !beside_->begun) throw Napi::Error::New(env, "no search beside was begun");
    Beside& b = *beside_;
    b.begun = false;
    std::unique_lock<std::mutex> lock(b.m);
    if (b.job) {
        // Not started yet (the helper waits for a core): run here rather than wait for it, so a
        // busy machine costs the query the two sides in turn at worst, not a scheduler's delay too.
        auto job = std::move(b.job);
        b.job = nullptr;
        lock.unlock();
        job();
        lock.lock();
        b.busy = false;
    }
    b.wait(lock, [&] { return !b.busy; });
    b.query.Reset();
    if (!b.error.empty()) throw Napi::Error::New(env, b.error);
    std::size_t wanted = b.keys.size();
    auto keys = Napi::BigUint64Array::New(env, wanted);
    auto distances = Napi::Float32Array::New(env, wanted);
    auto counts = Napi::Uint32Array::New(env, 1);
    std::copy(b.keys.begin(), b.keys.end(), keys.Data());
    std::copy(b.distances.begin(), b.distances.end(), distances.Data());
    counts[0] = static_cast<std::uint32_t>(b.count);
    Napi::Array out = Napi::Array::New(env, 3);
    out.Set(0u, keys);
    out.Set(1u, distances);
    out.Set(2u, counts);
    return out;
}

// contains(keys): boolean[]
Napi::Value Graph::Contains(Napi::CallbackInfo const& info) {
    auto keys = info[0].As<Napi::BigUint64Array>();
    std::size_t n = keys.ElementLength();
    Napi::Array out = Napi::Array::New(info.Env(), n);
    for (std::size_t i = 0; i < n; i++) out.Set(static_cast<std::uint32_t>(i), native_->contains(static_cast<default_key_t>(keys[i])));
    return out;
}

// get(key: bigint, out: Float32Array(dims)): boolean. The stored vector, decoded from its scalar kind.
Napi::Value Graph::Get(Napi::CallbackInfo const& info) {
    bool lossless = false;
    auto key = static_cast<default_key_t>(info[0].As<Napi::BigInt>().Uint64Value(&lossless));
    auto out = info[1].As<Napi::Float32Array>();
    if (out.ElementLength() != native_->dimensions()) throw Napi::RangeError::New(info.Env(), "out must hold dimensions floats");
    return Napi::Boolean::New(info.Env(), native_->get(key, out.Data()) > 0);
}

// gather(keys: BigUint64Array, out: Int8Array(keys.length · dims)): number. Copies each key's stored
// i8 vector to its row of `out`; keys equal to 2⁶⁴ − 1 are skipped (their rows left as they are).
// Answers how many other keys were not found (their rows are zeroed). Lock-free like a search: the
// mirror reads only keys whose insertion has ended, and a reserve (which moves the vector table)
// happens on this thread.
Napi::Value Graph::Gather(Napi::CallbackInfo const& info) {
    Napi::Env env = info.Env();
    auto keys = info[0].As<Napi::BigUint64Array>();
    auto out = info[1].As<Napi::TypedArray>();
    if (out.TypedArrayType() != napi_int8_array) throw Napi::TypeError::New(env, "out must be an Int8Array");
    std::size_t const dims = native_->dimensions();
    std::size_t const n = keys.ElementLength();
    if (native_->metric().scalar_kind() != scalar_kind_t::i8_k) throw Napi::TypeError::New(env, "gather reads i8 indexes only");
    if (out.ElementLength() < n * dims) throw Napi::RangeError::New(env, "out must hold keys.length × dimensions codes");
    auto* data = reinterpret_cast<std::int8_t*>(out.As<Napi::Int8Array>().Data());
    std::uint64_t const* key_data = keys.Data();
    std::size_t missing = 0;
    for (std::size_t i = 0; i < n; i++) {
        if (key_data[i] == std::numeric_limits<std::uint64_t>::max()) continue;
        if (native_->get(static_cast<default_key_t>(key_data[i]), data + i * dims) == 0) {
            std::fill_n(data + i * dims, dims, std::int8_t{0});
            missing++;
        }
    }
    return Napi::Number::New(env, static_cast<double>(missing));
}

void Graph::Save(Napi::CallbackInfo const& info) {
    std::string path = info[0].As<Napi::String>();
    std::lock_guard<std::mutex> lock(mutate_);
    auto result = native_->save(path.c_str());
    if (!result) throw Napi::Error::New(info.Env(), result.error.release());
}

Napi::Value Graph::SaveAsync(Napi::CallbackInfo const& info) {
    auto* work = new SaveWork(info.Env(), this, info.This().As<Napi::Object>(), info[0].As<Napi::String>().Utf8Value());
    Napi::Promise promise = work->promise();
    work->Queue();
    return promise;
}

void Graph::Load(Napi::CallbackInfo const& info) {
    std::string path = info[0].As<Napi::String>();
    std::lock_guard<std::mutex> lock(mutate_);
    pthread_rwlock_wrlock(&grow_);
    auto result = native_->load(path.c_str());
    pthread_rwlock_unlock(&grow_);
    if (!result) throw Napi::Error::New(info.Env(), result.error.release());
    if (!try_reserve(index_limits_t(ceil2(native_->size()), contexts_))) throw Napi::Error::New(info.Env(), "failed to reserve memory");
}

} // namespace

Napi::Object InitAll(Napi::Env env, Napi::Object exports) { return Graph::Init(env, exports); }

NODE_API_MODULE(vecsync_graph, InitAll)
